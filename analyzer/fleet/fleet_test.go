package fleet

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/workload"
)

var t0 = time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)

func TestWindow(t *testing.T) {
	for _, tt := range []struct {
		name     string
		w        Window
		steps    int
		first    time.Time
		rng, err string
	}{
		{name: "a day of minutes", w: Window{Start: t0, End: t0.Add(24 * time.Hour)}, steps: 1440, first: t0.Add(time.Minute), rng: "86399999ms"},
		{name: "odd start", w: Window{Start: t0.Add(30 * time.Second), End: t0.Add(time.Hour), Step: 5 * time.Minute}, steps: 12, first: t0.Add(5 * time.Minute), rng: "3599999ms"},
		{name: "sub-second step", w: Window{Start: t0, End: t0.Add(time.Hour), Step: 1500 * time.Millisecond}, err: "whole number of seconds"},
		{name: "end before start", w: Window{Start: t0, End: t0}, err: "after its start"},
		{name: "shorter than a step", w: Window{Start: t0, End: t0.Add(time.Minute - time.Second)}, err: "shorter than the step"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := tt.w.WithDefaults()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("WithDefaults: %v, want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			first, n := w.Grid()
			if n != tt.steps || !first.Equal(tt.first) || w.ExpectedSteps() != n {
				t.Errorf("Grid = %s, %d; ExpectedSteps %d; want %s, %d", first, n, w.ExpectedSteps(), tt.first, tt.steps)
			}
			if got := w.SubqueryRange(); got != tt.rng {
				t.Errorf("SubqueryRange = %q, want %q", got, tt.rng)
			}
		})
	}
}

// TestMergeClustersOfCluster: a fleet's result is its clusters' results
// named by cluster, and each cluster's part of it is that cluster's own.
func TestMergeClustersOfCluster(t *testing.T) {
	part := func(node string) *Result {
		return &Result{Schema: "native", Window: Window{Start: t0, End: t0.Add(time.Hour)}, ExpectedSteps: 60, QueryCount: 17, Shards: 1,
			Allocations: []Allocation{{AllocationKey: AllocationKey{Node: node, Namespace: "ml", Pod: "p", UUID: "GPU-" + node}}},
			Workloads:   []Workload{{WorkloadKey: WorkloadKey{Ref: workload.Ref{Kind: "Pod", Namespace: "ml", Name: "p"}}, GPUs: []GPUKey{{Node: node, UUID: "GPU-" + node}}}},
			GPUs:        []GPU{{GPUKey: GPUKey{Node: node, UUID: "GPU-" + node}}},
			PodOwners:   map[PodRef]Owner{{Namespace: "ml", Name: "p"}: {Kind: "Job", Name: "j"}},
			Notes:       []string{"partial"},
		}
	}
	fleet := MergeClusters([]Clustered{{Cluster: "b", Result: part("n2")}, {Cluster: "a", Result: part("n1")}})
	if fleet.QueryCount != 34 || fleet.Shards != 2 || len(fleet.GPUs) != 2 || fleet.GPUs[0].Cluster != "a" {
		t.Fatalf("merged: %+v", fleet)
	}
	if want := []string{"cluster a: partial", "cluster b: partial"}; !reflect.DeepEqual(fleet.Notes, want) {
		t.Errorf("Notes = %q, want %q", fleet.Notes, want)
	}
	b := fleet.OfCluster("b")
	want := part("n2")
	want.SetCluster("b")
	if !reflect.DeepEqual(b.Allocations, want.Allocations) || !reflect.DeepEqual(b.Workloads, want.Workloads) ||
		!reflect.DeepEqual(b.GPUs, want.GPUs) || !reflect.DeepEqual(b.PodOwners, want.PodOwners) {
		t.Errorf("OfCluster(b) = %+v, want the rows of %+v", b, want)
	}
	if ClusterName("") != "(no cluster label)" || ClusterName("a") != "cluster a" {
		t.Error("ClusterName")
	}
}

func TestMergeTimelines(t *testing.T) {
	tl := func(ns string) *Timeline {
		return &Timeline{Step: time.Hour, Ends: []time.Time{t0}, Namespaces: []NamespaceSeries{{Namespace: ns, Measured: []float64{1}, Used: []float64{0.5}}}}
	}
	got := MergeTimelines(map[string]*Timeline{"b": tl("ml"), "a": tl("ml")})
	if len(got.Namespaces) != 2 || got.Namespaces[0].Cluster != "a" || got.Namespaces[1].Cluster != "b" || got.Step != time.Hour {
		t.Errorf("MergeTimelines = %+v", got)
	}
}
