package query

import (
	"testing"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// TestPlanNamespacesCoversEveryName checks the namespace plan's ranges
// tile every string and cut a split namespace only between workloads.
func TestPlanNamespacesCoversEveryName(t *testing.T) {
	a := &analysis{allocs: map[fleet.AllocationKey]*fleet.Allocation{}}
	add := func(ns, pod, workload string, steps int) {
		a.allocs[fleet.AllocationKey{Namespace: ns, Pod: pod}] = &fleet.Allocation{AllocationKey: fleet.AllocationKey{Namespace: ns, Pod: pod}, Workload: workload, WorkloadKind: "Job", Steps: steps}
	}
	// big needs more than the budget: two Job workloads and a bare pod;
	// alpha and small fit together. The budget holds two pods.
	add("big", "train-a-x", "train-a", 10)
	add("big", "train-b-x", "train-b", 10)
	add("big", "train-a-y", "train-a", 10)
	add("big", "zeta", "", 10)
	add("small", "p", "", 1)
	add("alpha", "q", "", 1)
	budget := float64(2 * 10 * perAllocationStep)
	shards, err := a.planNamespaces(budget, Sharding{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []struct{ ns, pod string }{{"", ""}, {"alpha", "q"}, {"b", "x"}, {"big", ""}, {"big", "train-a-x"}, {"big", "train-a-y"},
		{"big", "train-b-x"}, {"big", "zeta"}, {"big\x00", "a"}, {"bigger", "x"}, {"small", "p"}, {"zzz", "z"}} {
		n := 0
		for _, s := range shards {
			if s.ns.contains(name.ns) && s.pods.contains(name.pod) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s/%s is in %d shards of %+v, want 1", name.ns, name.pod, n, shards)
		}
	}
	// train-a's two pods share a shard.
	for _, s := range shards {
		if s.pods.contains("train-a-x") != s.pods.contains("train-a-y") && s.ns.contains("big") {
			t.Errorf("shard %+v splits train-a", s)
		}
	}
}

// TestPlanNamespacesPacksWorkloads: workloads each within the budget, but
// not two together, whose pods sort one workload after the other (the
// StatefulSets s0-0…s0-2, s1-0…): each begins its own shard. A plan that
// cut only when a pod overflowed found itself inside a workload and gave
// up.
func TestPlanNamespacesPacksWorkloads(t *testing.T) {
	a := &analysis{allocs: map[fleet.AllocationKey]*fleet.Allocation{}}
	for _, set := range []string{"s0", "s1", "s2"} {
		for i := range 3 {
			k := fleet.AllocationKey{Namespace: "team", Pod: set + "-" + string(rune('0'+i))}
			a.allocs[k] = &fleet.Allocation{AllocationKey: k, Workload: set, WorkloadKind: "StatefulSet", Steps: 10}
		}
	}
	// One workload is 3 × 10 × perAllocationStep; the budget holds one
	// and a half.
	budget := float64(3*10*perAllocationStep) * 1.5
	shards, err := a.planNamespaces(budget, Sharding{})
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range []string{"s0", "s1", "s2"} {
		n := 0
		for _, s := range shards {
			if s.ns.contains("team") && s.pods.contains(set+"-0") {
				n++
				for i := 1; i < 3; i++ {
					if !s.pods.contains(set + "-" + string(rune('0'+i))) {
						t.Errorf("shard %+v holds %s-0 but not %s-%d", s, set, set, i)
					}
				}
				if other := map[string]string{"s0": "s1-0", "s1": "s2-0", "s2": "s0-0"}[set]; s.pods.contains(other) {
					t.Errorf("shard %+v holds %s and %s: over the budget", s, set, other)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s-0 in %d shards", set, n)
		}
	}
}
