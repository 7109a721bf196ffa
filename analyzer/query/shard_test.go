package query

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	simfleet "github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

// TestShardedEqualsUnsharded simulates the demo's fleet (sim.Default: six
// nodes, 38 GPUs, every sharing mode, one node's GPUs through DRA claims)
// for three hours in each schema and
// layout, and checks on the embedded engine that:
//   - with one node, and one namespace split at every workload boundary
//     of its pods, per shard the analysis is the
//     unsharded one, row for row and note for note;
//   - with a sample limit below what the unsharded queries need, the
//     unsharded analysis fails with the engine's own error, and the
//     analysis given that limit as its budget shards itself and succeeds
//     with the same result.
func TestShardedEqualsUnsharded(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo fleet four times")
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	w := fleet.Window{Start: start, End: start.Add(3 * time.Hour), Step: time.Minute}
	for _, m := range []struct {
		name           string
		sch            signals.Schema
		serviceMonitor bool
		layout         simfleet.DCGMLayout
		// noBudget: the namespace queries, which dcgm-exporter's data
		// runs unsharded (shardLabels), are among the analysis's heaviest
		// (utilization and memory read a flapping pod label's co-tenants
		// on both sides of each step, dcgm.Held), so a budget at three
		// quarters of the unsharded peak cannot hold them; only the
		// forced small shards are compared. Known limit: ARCHITECTURE.md.
		noBudget bool
	}{
		{"native", native.Schema{}, false, 0, false},
		{"native/honorLabels-false", native.Schema{}, true, 0, false},
		{"dcgm/per-process", dcgm.Schema{}, false, simfleet.DCGMVirtualGPUs2025, true},
		{"dcgm/one-pod/honorLabels-false", dcgm.Schema{}, true, simfleet.DCGMNoVirtualGPUs, true},
	} {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), "tsdb")
			db, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			simulateDemo(t, db, w, m.sch, m.layout, m.serviceMonitor)
			want, err := Analyze(ctx, db, m.sch, w)
			if err != nil {
				t.Fatal(err)
			}
			if gpus := demoGPUs(); want.Shards != 1 || len(want.GPUs) != gpus || len(want.Workloads) == 0 {
				t.Fatalf("unsharded: %d shards, %d GPUs, %d workloads; want 1, %d and some", want.Shards, len(want.GPUs), len(want.Workloads), gpus)
			}
			checkDemoPaths(t, want)
			peak := peakSamples(t, db, m.sch, w)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}

			tiny, err := AnalyzeSharded(ctx, reopen(t, dir, 0), m.sch, w, Sharding{MaxNodes: 1, MaxNamespaces: 1, MaxPods: 1})
			if err != nil {
				t.Fatal(err)
			}
			// Four nodes, and a namespace shard per workload's pods
			// (native) or one (dcgm-exporter: see shardLabels).
			if tiny.Shards < 5 {
				t.Errorf("forced tiny shards: %d shards, want one per node and namespace", tiny.Shards)
			}
			sameFindings(t, "one node and namespace per shard", tiny, want)
			if m.noBudget {
				return
			}

			// Two thirds of the unsharded peak: the largest node holds
			// under a third of the fleet's GPUs and allocations, and the
			// cost model's margin over the measured peak is under 1.5
			// (perSeriesStep), so a node's shard fits; the peak is a query
			// the analysis folds in a raw pass (gpu allocated steps), and
			// its heaviest engine query (gpu utilization average) is over
			// 0.7 of it, so the unsharded analysis does not.
			limit := peak * 2 / 3
			low := reopen(t, dir, limit)
			_, err = Analyze(ctx, low, m.sch, w)
			if err == nil || !strings.Contains(err.Error(), "query processing would load too many samples into memory") {
				t.Fatalf("unsharded with MaxSamples %d (the peak is %d): %v, want the engine's limit error", limit, peak, err)
			}
			got, err := AnalyzeSharded(ctx, low, m.sch, w, Sharding{MaxSamples: limit})
			if err != nil {
				t.Fatalf("sharded within %d samples: %v", limit, err)
			}
			if got.Shards < 2 {
				t.Errorf("budget %d: %d shards, want it split", limit, got.Shards)
			}
			sameFindings(t, "sized from the budget", got, want)
		})
	}
}

// reopen opens the TSDB at dir read-only with the sample limit.
func reopen(t *testing.T, dir string, maxSamples int) *source.Embedded {
	t.Helper()
	src, err := source.OpenEmbedded(dir, source.EmbeddedOptions{ReadOnly: true, MaxSamples: maxSamples})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// peakSamples is the most samples one of the unsharded queries holds,
// from the engine's own statistics.
func peakSamples(t *testing.T, db *source.Embedded, sch signals.Schema, w fleet.Window) int {
	t.Helper()
	ww, err := w.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	ng := bareEngine(source.EmbeddedOptions{})
	peak := 0
	for _, q := range newAnalysis(sch, ww).scanQueries(sch) {
		qry, err := ng.NewInstantQuery(context.Background(), db, nil, q.expr, ww.End)
		if err != nil {
			t.Fatal(err)
		}
		if res := qry.Exec(context.Background()); res.Err != nil {
			t.Fatal(res.Err)
		}
		peak = max(peak, qry.Stats().Samples.PeakSamples)
		qry.Close()
	}
	return peak
}

// sameFindings compares everything an analysis finds; the query and
// shard counts are how it was found.
func sameFindings(t *testing.T, name string, got, want *fleet.Result) {
	t.Helper()
	for _, f := range []struct {
		field     string
		got, want any
	}{
		{"Allocations", got.Allocations, want.Allocations},
		{"GPUs", got.GPUs, want.GPUs},
		{"Workloads", got.Workloads, want.Workloads},
		{"PodOwners", got.PodOwners, want.PodOwners},
		{"Notes", got.Notes, want.Notes},
		{"ExpectedSteps", got.ExpectedSteps, want.ExpectedSteps},
	} {
		if !reflect.DeepEqual(f.got, f.want) {
			t.Errorf("%s: %s differ:\n got %+v\nwant %+v", name, f.field, f.got, f.want)
		}
	}
}

// simulateDemo writes the demo fleet over w into db as sch's exporter
// writes it: in layout for dcgm-exporter, and through a ServiceMonitor
// with honorLabels: false where serviceMonitor is set.
// demoGPUs is how many GPUs the demo's scenario has.
func demoGPUs() int {
	n := 0
	for _, node := range sim.Default().Nodes {
		n += node.GPUs
	}
	return n
}

// checkDemoPaths: either exporter's series of the demo say which
// allocations came through a DRA claim (dcgm-exporter's as its emulator
// writes --kubernetes-enable-dra's dra_* labels): every one on the scenario's DRA
// nodes, none elsewhere, and embed-serving-a and -b name the claim they
// share.
func checkDemoPaths(t *testing.T, res *fleet.Result) {
	t.Helper()
	dra := map[string]bool{}
	for _, n := range sim.Default().Nodes {
		dra[n.Name] = n.DRA
	}
	claims := map[string]string{}
	n := 0
	for _, x := range res.Allocations {
		want := vocab.AllocationPathDevicePlugin
		if dra[x.Node] {
			want = vocab.AllocationPathDRA
			n++
		}
		if x.AllocationPath != want || (want == vocab.AllocationPathDRA) != (x.Claim != fleet.ClaimRef{}) {
			t.Errorf("%s/%s on %s: path %q, claim %v; want %s", x.Namespace, x.Pod, x.Node, x.AllocationPath, x.Claim, want)
		}
		claims[x.Pod] = x.Claim.String()
	}
	if n == 0 || claims["embed-serving-a"] != "team-recsys/embed-shared-gpu" || claims["embed-serving-b"] != claims["embed-serving-a"] {
		t.Errorf("%d DRA allocations; embed-serving's claims %q and %q, want team-recsys/embed-shared-gpu for both", n, claims["embed-serving-a"], claims["embed-serving-b"])
	}
}

func simulateDemo(t *testing.T, db *source.Embedded, w fleet.Window, sch signals.Schema, layout simfleet.DCGMLayout, serviceMonitor bool) {
	t.Helper()
	ctx := context.Background()
	var n atomic.Int64
	newSink := func(node string) simfleet.Sink {
		var sink simfleet.Sink = simfleet.NewTSDBSink(ctx, db, &n)
		dcgm := sch.Name() == dcgm.SchemaName
		if serviceMonitor {
			target := simfleet.ExporterTarget("gpulens", "gpulens-exporter", "exporter", "9845", node)
			if dcgm {
				target = simfleet.DCGMTarget(node)
			}
			sink = simfleet.NewServiceMonitorSink(sink, target)
		}
		if dcgm {
			d := simfleet.NewDCGMSink(sink)
			d.Layout = layout
			sink = d
		}
		return sink
	}
	if err := simfleet.Run(ctx, simfleet.Options{Scenario: sim.Default(), Start: w.Start, End: w.End, Step: w.Step}, newSink); err != nil {
		t.Fatal(err)
	}
}
