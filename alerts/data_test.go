package alerts

import (
	"context"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/vocab"
)

// tee writes the native series to one sink and through a DCGMSink to
// another: the same samples under both schemas.
type tee struct {
	native fleet.Sink
	dcgm   *fleet.DCGMSink
}

func (t tee) Append(ts time.Time, name string, lbls []*dto.LabelPair, v float64) error {
	if err := t.native.Append(ts, name, lbls, v); err != nil {
		return err
	}
	return t.dcgm.Append(ts, name, lbls, v)
}

func (t tee) EndStep(ts time.Time) error {
	if err := t.native.EndStep(ts); err != nil {
		return err
	}
	return t.dcgm.EndStep(ts)
}

func (t tee) Close() error {
	if err := t.native.Close(); err != nil {
		return err
	}
	return t.dcgm.Close()
}

// inlineRecorded replaces the recording rules' names in expr with their
// expressions, as subqueries at the evaluation interval where expr reads
// them over a range: the TSDB holds the exporters' series only, not what
// a rule evaluator would have recorded.
func inlineRecorded(f File, expr string) string {
	for changed := true; changed; {
		changed = false
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				// The whole name only: one record's name can begin
				// another's (…:ratio and …:ratio_hostlabel).
				name := regexp.MustCompile(regexp.QuoteMeta(r.Record) + `\b`)
				if r.Record == "" || !name.MatchString(expr) {
					continue
				}
				changed = true
				inlined := strings.ReplaceAll(r.Expr, "$", "$$")
				rng := regexp.MustCompile(regexp.QuoteMeta(r.Record) + `\[(\w+)\]`)
				expr = rng.ReplaceAllString(expr, "("+inlined+")[${1}:1m]")
				expr = name.ReplaceAllString(expr, "("+inlined+")")
			}
		}
	}
	return expr
}

// TestRulesOnTheDemoFleet evaluates the rules' expressions against 70
// minutes of the demo fleet (sim.Default) under both schemas: every
// recording rule returns data, and the idle alert's condition selects the
// idle notebooks on both, and the same allocations except where
// dcgm-exporter cannot tell.
func TestRulesOnTheDemoFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo fleet")
	}
	ctx := context.Background()
	end := time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC)
	dbs := map[string]*source.Embedded{}
	for _, name := range []string{"gpulens.rules.yml", "dcgm-exporter.rules.yml"} {
		db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs[name] = db
	}
	var n atomic.Int64
	err := fleet.Run(ctx, fleet.Options{Scenario: sim.Default(), Start: end.Add(-70 * time.Minute), End: end, Step: time.Minute},
		func(node string) fleet.Sink {
			return tee{
				native: fleet.NewTSDBSink(ctx, dbs["gpulens.rules.yml"], &n).WithTarget("gpulens-exporter", node+":9845"),
				dcgm:   fleet.NewDCGMSink(fleet.NewTSDBSink(ctx, dbs["dcgm-exporter.rules.yml"], &n).WithTarget("dcgm-exporter", node+":9400")),
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	// idle holds, per rule file, the allocations the idle alert's condition
	// selects, with the sharing mode gpulens reports for them.
	idle := map[string]map[string]string{}
	for name, build := range Files {
		idle[name] = map[string]string{}
		f := build(criteria.DefaultConfig())
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if r.Record == "" && r.Alert != string(vocab.AlertGPUAllocatedIdle) {
					continue
				}
				vec, err := dbs[name].Query(ctx, inlineRecorded(f, r.Expr), end)
				if err != nil {
					t.Errorf("%s: %s%s: %v", name, r.Record, r.Alert, err)
					continue
				}
				if len(vec) == 0 {
					t.Errorf("%s: %s%s returns no data", name, r.Record, r.Alert)
				}
				if r.Alert != "" {
					for _, s := range vec {
						idle[name][string(s.Metric["namespace"])+"/"+string(s.Metric["pod"])] = string(s.Metric["sharing"])
					}
				}
			}
		}
	}
	native, dcgm := idle["gpulens.rules.yml"], idle["dcgm-exporter.rules.yml"]
	// The notebooks that idle through the simulated hour, on whole GPUs
	// and MIG slices, alike on both schemas (alice-jupyter-0's seeded
	// bursts fall in this hour: the scenario's notebooks idle most of the
	// time, not every hour).
	for _, pod := range []string{"bob-jupyter-0", "dave-jupyter-0", "frank-jupyter-0", "grace-jupyter-0"} {
		if _, ok := native["research-notebooks/"+pod]; !ok {
			t.Errorf("native: %s is not idle by the alert: %v", pod, native)
		}
		if _, ok := dcgm["research-notebooks/"+pod]; !ok {
			t.Errorf("dcgm-exporter: %s is not idle by the alert: %v", pod, dcgm)
		}
	}
	// dcgm-exporter copies a shared GPU's utilization to every tenant, so
	// it cannot see an idle tenant there; elsewhere the schemas agree.
	for pod, sharing := range native {
		if _, ok := dcgm[pod]; !ok && sharing != "time-slicing" && sharing != "mps" {
			t.Errorf("%s (%s) is idle by the native rules only", pod, sharing)
		}
	}
	// Where the GPU is shared, dcgm-exporter's copied utilization is the
	// whole GPU's, a tenant's own is of its share (an eighth of an A100
	// used 1% of it is 8% of its share): a quiet shared GPU reads every
	// tenant idle there, and only the idlest natively.
	shared := sharedPods(sim.Default())
	for pod := range dcgm {
		if _, ok := native[pod]; !ok && !shared[pod] {
			t.Errorf("%s is idle by the dcgm-exporter rules only", pod)
		}
	}
}

// sharedPods are the scenario's pods ("namespace/pod") on GPUs that
// time-slicing or MPS shares.
func sharedPods(sc *sim.Scenario) map[string]bool {
	out := map[string]bool{}
	for _, n := range sc.Nodes {
		shared := map[int]bool{}
		for _, sh := range n.Sharing {
			if sh.Mode == "time-slicing" || sh.Mode == "mps" {
				for _, g := range sh.GPUs {
					shared[g] = true
				}
			}
		}
		for _, p := range n.Pods {
			if shared[p.GPU] {
				out[p.Namespace+"/"+p.Name] = true
			}
		}
	}
	return out
}
