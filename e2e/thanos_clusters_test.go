package e2e

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals/native"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/vocab"
)

// sameNameWorkload is the namespace and name both clusters of
// TestThanosQuery give a workload: a whole H100 in cluster a
// (testdata/fleet.yaml), half a time-sliced one in cluster b
// (testdata/thanos/cluster-b.yaml), both of the same model, so that
// without the cluster dimension they are one workload.
var sameNameWorkload = struct{ namespace, name string }{"team-nlp", "llm-train"}

// sameNameShares are its GPUs' worth in each cluster, from the scenarios:
// a whole GPU in a, one of the two time-slicing replicas of one in b.
var sameNameShares = map[string]float64{"a": 1, "b": 0.5}

// runPipeline runs the analysis gpulens reports from (pipeline.Run) over
// w, reading the store's clusters by label (none where label is "").
func runPipeline(ctx context.Context, src source.Source, label string, w fleet.Window) (*pipeline.Analysis, error) {
	return pipeline.Run(ctx, pipeline.Options{
		Source: src, Schema: native.Schema{}, Start: w.Start, End: w.End, Step: w.Step, ClusterLabel: label,
	})
}

// checkClusterFigures is TestThanosQuery's check of the cluster dimension:
// the analysis through Thanos Query with the cluster label finds clusters
// a and b, and each cluster's allocations, workloads and GPUs, every
// figure of them, are those of the analysis of that cluster's own
// Prometheus with no label, named for the cluster. Cluster a's own
// Prometheus is one of its HA pair: Thanos Query serves both, so equal
// figures mean the replica doubles no GPU-hour. Both clusters run a
// team-nlp/llm-train (sameNameWorkload), which must be two workloads with
// the GPU-hours of their scenarios. unlabelled is the analysis through
// Thanos Query without the cluster dimension, which merges the two: the
// premise of that check.
//
// Every figure must be equal but for two: the Prometheus servers are
// Debian's Prometheus 2 and Thanos Query evaluates with the Prometheus 3
// engine, whose avg_over_time may differ by a few ulps (a running mean
// against a compensated sum divided by the count: thanosTolerance, though
// the two agree exactly on this data as it stands) and whose increase()
// extrapolates where Prometheus 2's does not (EnergyJoules: compareEnergy).
func checkClusterFigures(t *testing.T, thanosURL string, own map[string]string, w fleet.Window, unlabelled *fleet.Result) {
	t.Helper()
	ctx := context.Background()
	all, err := runPipeline(ctx, remote(t, thanosURL), vocab.DefaultClusterLabel, w)
	if err != nil {
		t.Fatalf("analysis through Thanos Query with --cluster-label %s: %v", vocab.DefaultClusterLabel, err)
	}
	if !slices.Equal(all.Clusters, []string{"a", "b"}) {
		t.Fatalf("clusters through Thanos Query %q, want [a b]", all.Clusters)
	}

	nAllocs, nWorkloads, nGPUs := 0, 0, 0
	for _, c := range all.Clusters {
		alone, err := runPipeline(ctx, remote(t, own[c]), "", w)
		if err != nil {
			t.Fatalf("analysis of cluster %s's own Prometheus: %v", c, err)
		}
		if alone.Clusters != nil {
			t.Fatalf("cluster %s's own Prometheus read as clusters %q", c, alone.Clusters)
		}
		want := alone.Current
		want.SetCluster(c)
		got := all.Current.OfCluster(c)
		if len(want.Allocations) == 0 || len(want.Workloads) == 0 || len(want.GPUs) == 0 {
			t.Fatalf("cluster %s's own Prometheus: %d allocations, %d workloads, %d GPUs; want some of each",
				c, len(want.Allocations), len(want.Workloads), len(want.GPUs))
		}
		nAllocs += len(want.Allocations)
		nWorkloads += len(want.Workloads)
		nGPUs += len(want.GPUs)
		compareRows(t, "cluster "+c, got, want.OfCluster(c))
		compareEnergy(t, c, got.GPUs, unlabelled)
		// Also as totals: cluster a's own Prometheus is one of the HA
		// pair, and Thanos Query serves both, yet the totals are one's.
		if g, w := gpuHours(got), gpuHours(want); !closeTo(g.allocated, w.allocated) || !closeTo(g.reported, w.reported) || !closeTo(g.held, w.held) {
			t.Errorf("cluster %s: GPU-hours allocated/reported/held %+v through Thanos Query, %+v in its own Prometheus", c, g, w)
		}
		compareFindings(t, c, all.Findings, alone.Findings)
		t.Logf("cluster %s: %d allocations, %d workloads, %d GPUs, %.4f allocated GPU-hours, the same through Thanos Query as in its own Prometheus",
			c, len(want.Allocations), len(want.Workloads), len(want.GPUs), gpuHours(want).allocated)
	}
	// Every row is some cluster's: none is lost or unnamed.
	if len(all.Current.Allocations) != nAllocs || len(all.Current.Workloads) != nWorkloads || len(all.Current.GPUs) != nGPUs {
		t.Errorf("through Thanos Query %d allocations, %d workloads, %d GPUs; the clusters' own Prometheus servers %d, %d, %d",
			len(all.Current.Allocations), len(all.Current.Workloads), len(all.Current.GPUs), nAllocs, nWorkloads, nGPUs)
	}

	// The workload of the same namespace and name in both clusters is
	// two, each with its scenario's GPU-hours: its GPUs' worth for the
	// whole window, which no pod of it starts or ends in.
	hours := w.End.Sub(w.Start).Hours()
	premise := workloadsNamed(unlabelled.Workloads)
	if len(premise) != 1 {
		t.Fatalf("without the cluster dimension, %d workloads %s/%s through Thanos Query, want 1 (the two clusters' merged): "+
			"the scenarios no longer make the two collide", len(premise), sameNameWorkload.namespace, sameNameWorkload.name)
	}
	if want := (sameNameShares["a"] + sameNameShares["b"]) * hours; !closeEnough(want, premise[0].AllocatedGPUHours, 1e-12) {
		t.Errorf("without the cluster dimension, %s/%s: %v GPU-hours, want both clusters' %v",
			sameNameWorkload.namespace, sameNameWorkload.name, premise[0].AllocatedGPUHours, want)
	}
	named := workloadsNamed(all.Current.Workloads)
	var clusters []string
	for _, x := range named {
		clusters = append(clusters, x.Cluster)
		want := sameNameShares[x.Cluster] * hours
		if !closeEnough(want, x.AllocatedGPUHours, 1e-12) {
			t.Errorf("cluster %s: %s/%s: %v GPU-hours, want %v (%v GPUs for %v hours)",
				x.Cluster, x.Namespace, x.Name, x.AllocatedGPUHours, want, sameNameShares[x.Cluster], hours)
		}
	}
	t.Logf("%s/%s: %d workloads, of clusters %q, GPU-hours %v; without the cluster dimension one of %v",
		sameNameWorkload.namespace, sameNameWorkload.name, len(named), clusters, allocatedGPUHours(named), premise[0].AllocatedGPUHours)
	if !slices.Equal(clusters, []string{"a", "b"}) {
		t.Errorf("workloads %s/%s through Thanos Query are of clusters %q, want one of each of [a b]",
			sameNameWorkload.namespace, sameNameWorkload.name, clusters)
	}
}

// workloadsNamed are the workloads named sameNameWorkload, by cluster.
func workloadsNamed(ws []fleet.Workload) []fleet.Workload {
	var out []fleet.Workload
	for _, x := range ws {
		if x.Namespace == sameNameWorkload.namespace && x.Name == sameNameWorkload.name {
			out = append(out, x)
		}
	}
	slices.SortFunc(out, func(x, y fleet.Workload) int { return strings.Compare(x.Cluster, y.Cluster) })
	return out
}

func allocatedGPUHours(ws []fleet.Workload) []float64 {
	var out []float64
	for _, x := range ws {
		out = append(out, x.AllocatedGPUHours)
	}
	return out
}

// thanosTolerance is the relative tolerance of each float figure between
// Debian's Prometheus 2 and Thanos Query's Prometheus 3 engine: the one
// between Prometheus 2 and the embedded engine (prometheus2), exact but
// for a few ulps of avg_over_time (checkClusterFigures).
var thanosTolerance = prometheus2.tolerance(nil)

// compareRows checks got's rows against want's, field by field, each row
// found by its key (which names the cluster).
func compareRows(t *testing.T, name string, got, want *fleet.Result) {
	t.Helper()
	if len(got.Allocations) != len(want.Allocations) || len(got.Workloads) != len(want.Workloads) || len(got.GPUs) != len(want.GPUs) {
		t.Errorf("%s: %d allocations, %d workloads, %d GPUs through Thanos Query; %d, %d, %d in its own Prometheus",
			name, len(got.Allocations), len(got.Workloads), len(got.GPUs), len(want.Allocations), len(want.Workloads), len(want.GPUs))
	}
	allocs := map[fleet.AllocationKey]fleet.Allocation{}
	for _, x := range got.Allocations {
		allocs[x.AllocationKey] = x
	}
	for _, x := range want.Allocations {
		g, ok := allocs[x.AllocationKey]
		if !ok {
			t.Errorf("%s: allocation %+v missing through Thanos Query", name, x.AllocationKey)
			continue
		}
		compareFields(t, fmt.Sprintf("%s: allocation %s/%s/%s on %s", name, x.Namespace, x.Pod, x.Container, x.UUID),
			reflect.ValueOf(x), reflect.ValueOf(g), thanosTolerance, nil)
	}
	workloads := map[fleet.WorkloadKey]fleet.Workload{}
	for _, x := range got.Workloads {
		workloads[x.WorkloadKey] = x
	}
	for _, x := range want.Workloads {
		g, ok := workloads[x.WorkloadKey]
		if !ok {
			t.Errorf("%s: workload %+v missing through Thanos Query", name, x.WorkloadKey)
			continue
		}
		compareFields(t, fmt.Sprintf("%s: workload %s/%s", name, x.Namespace, x.Name),
			reflect.ValueOf(x), reflect.ValueOf(g), thanosTolerance, nil)
	}
	gpus := map[fleet.GPUKey]fleet.GPU{}
	for _, x := range got.GPUs {
		gpus[x.GPUKey] = x
	}
	for _, x := range want.GPUs {
		g, ok := gpus[x.GPUKey]
		if !ok {
			t.Errorf("%s: GPU %+v missing through Thanos Query", name, x.GPUKey)
			continue
		}
		compareFields(t, fmt.Sprintf("%s: GPU %s on %s", name, x.UUID, x.Node),
			reflect.ValueOf(x), reflect.ValueOf(g), thanosTolerance,
			map[string]string{"EnergyJoules": "increase() differs by engine; compareEnergy"})
	}
}

// compareEnergy checks the GPUs' EnergyJoules through Thanos Query by
// cluster against the same GPUs' through Thanos Query without the cluster
// dimension. It cannot be compared with the clusters' own Prometheus
// servers: their Prometheus 2 engine's increase() sees the sample at the
// window's start and so does not extrapolate, where Thanos Query's
// Prometheus 3 engine does (prometheus_test.go, prometheus2.energy), up to
// a step's energy apart. Through one engine, scoping a cluster changes
// nothing.
func compareEnergy(t *testing.T, c string, gpus []fleet.GPU, unlabelled *fleet.Result) {
	t.Helper()
	byKey := map[fleet.GPUKey]fleet.GPU{}
	for _, g := range unlabelled.GPUs {
		byKey[g.GPUKey] = g
	}
	for _, g := range gpus {
		u, ok := byKey[fleet.GPUKey{Node: g.Node, UUID: g.UUID}]
		if !ok {
			t.Errorf("cluster %s: GPU %s on %s missing without the cluster dimension", c, g.UUID, g.Node)
			continue
		}
		if g.EnergyJoules <= 0 || g.EnergyJoules != u.EnergyJoules {
			t.Errorf("cluster %s: GPU %s on %s: EnergyJoules = %v by cluster, %v without the cluster dimension",
				c, g.UUID, g.Node, g.EnergyJoules, u.EnergyJoules)
		}
	}
}

// findingID is what a finding is about.
type findingID struct {
	Kind                                vocab.Kind
	Namespace, Workload, Pod, Node, GPU string
}

// compareFindings checks that the findings through Thanos Query of
// cluster c are about what those of its own Prometheus are about.
func compareFindings(t *testing.T, c string, all, alone *findings.Result) {
	t.Helper()
	ids := func(fs []findings.Finding, cluster string) []findingID {
		var out []findingID
		for _, f := range fs {
			if f.Cluster == cluster {
				out = append(out, findingID{f.Kind, f.Namespace, f.Workload, f.Pod, f.Node, f.GPUUUID})
			}
		}
		slices.SortFunc(out, func(x, y findingID) int { return strings.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
		return out
	}
	got, want := ids(all.Findings, c), ids(alone.Findings, "")
	if !slices.Equal(got, want) {
		t.Errorf("cluster %s: findings through Thanos Query %+v, in its own Prometheus %+v", c, got, want)
	}
	for _, f := range all.Findings {
		if f.Cluster == "" {
			t.Errorf("finding %s on %s/%s through Thanos Query names no cluster", f.Kind, f.Namespace, f.Workload)
		}
		if r := f.Recommendation; r != nil && r.Workload.Cluster != f.Cluster {
			t.Errorf("recommendation for %s in cluster %q, its finding in %q", r.Workload, r.Workload.Cluster, f.Cluster)
		}
	}
}

// pipelinePartial checks that gpulens's analysis through Thanos Query with
// the cluster dimension, with the store at addr down, fails with a
// *source.PartialResponseError and gives no figures at all: a cluster
// whose store is down is neither dropped from the clusters nor analysed
// from what is left of it.
func pipelinePartial(t *testing.T, url string, w fleet.Window, addr string) {
	t.Helper()
	a, err := runPipeline(context.Background(), remote(t, url), vocab.DefaultClusterLabel, w)
	var partial *source.PartialResponseError
	if !errors.As(err, &partial) || a != nil {
		t.Fatalf("analysis by cluster with the store at %s down: err = %v (analysis %v), want a *source.PartialResponseError and no analysis", addr, err, a != nil)
	}
	t.Logf("analysis by cluster with the store at %s down: %v", addr, err)
	if !strings.Contains(err.Error(), "partial") || !strings.Contains(err.Error(), addr) {
		t.Errorf("error %q should say the answer is partial and name the failed store %s", err, addr)
	}
}
