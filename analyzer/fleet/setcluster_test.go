package fleet

import "testing"

// TestSetClusterKeysTheUsage: the per-step use of an allocation is keyed
// as the allocation is, so that a plan made from a merged analysis of
// several clusters (pipeline's analyzeClusters, then plan.FromAnalysis)
// finds every allocation's row. Before, the use kept the empty cluster
// and the report's consolidation of a store of several clusters planned
// no workload at all.
func TestSetClusterKeysTheUsage(t *testing.T) {
	k := AllocationKey{Node: "n1", Namespace: "ns", Pod: "p", Container: "c", UUID: "GPU-1"}
	r := &Result{Allocations: []Allocation{{AllocationKey: k}}, Usage: &Usage{Allocations: []AllocationUsage{{AllocationKey: k}}}}
	r.SetCluster("eu")
	if a, u := r.Allocations[0].AllocationKey, r.Usage.Allocations[0].AllocationKey; a != u || u.Cluster != "eu" {
		t.Errorf("allocation keyed %+v, its use %+v: want both of cluster eu", a, u)
	}
	(&Result{}).SetCluster("us") // no use folded: nothing to key
}
