package rollup

import (
	"slices"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// Cluster sums the fleet, or one cluster of it. Its Hours are that of all
// allocations; the rest covers the capacity no one held.
type Cluster struct {
	Hours
	GPUs                int     `json:"gpus"`
	CapacityGPUHours    float64 `json:"capacity_gpu_hours"`
	UnallocatedGPUHours float64 `json:"unallocated_gpu_hours"`
	// UnattributedGPUHours and UnattributedCost are the capacity no
	// allocation held that was in use all the same, by a tenant the data
	// cannot name (findings.Result.UsedWithoutPod): neither allocated nor
	// free, and not in EstimatedWaste.
	UnattributedGPUHours float64 `json:"unattributed_gpu_hours"`
	UnattributedCost     float64 `json:"unattributed_cost"`
	// AvgUtilization is the physical GPUs' busy fraction.
	AvgUtilization  float64 `json:"avg_utilization"`
	CapacityCost    float64 `json:"capacity_cost"`
	UnallocatedCost float64 `json:"unallocated_cost"`
	// CapacityCostKnown is false when a GPU had no price:
	// CapacityUnpriced then says which, and CapacityCost,
	// UnallocatedCost and EstimatedWaste leave them out.
	CapacityCostKnown bool      `json:"capacity_cost_known"`
	CapacityUnpriced  *Unpriced `json:"capacity_unpriced,omitempty"`
	// EstimatedWaste is idle allocations plus unallocated capacity.
	EstimatedWaste float64 `json:"estimated_waste"`
	Previous       *Hours  `json:"previous"`
	Change         *Change `json:"change"`
}

// summary sums the part of the fleet in the clusters in says: all of it
// for the fleet-wide summary, one cluster for a cluster's. The
// allocated figures are those of the teams (teams never span clusters),
// so the teams add up to the summary exactly.
//
// A GPU used while no pod held it (findings.Result.UsedWithoutPod) has a
// tenant the data cannot name: its time without an allocation is
// counted as unattributed, not as unallocated waste.
func summary(cur, prev *fleet.Result, teams []Team, pr *Pricer, usedWithoutPod func(fleet.GPUKey) bool, in func(cluster string) bool) Cluster {
	c := Cluster{}
	for _, t := range teams {
		if in(t.Cluster) {
			c.Sum(t.Hours)
		}
	}
	c.Finish(pr)
	held := heldByGPU(cur)
	var utilSum float64
	var utilSteps int
	for _, g := range cur.GPUs {
		if !in(g.Cluster) {
			continue
		}
		price, ok := pr.PerHour(g.Model)
		if !ok {
			c.CapacityUnpriced = AddUnpriced(c.CapacityUnpriced, g.Model, 1, g.ReportedHours, 0)
		}
		free := max(0, g.ReportedHours-held[g.GPUKey])
		c.GPUs++
		c.CapacityGPUHours += g.ReportedHours
		c.CapacityCost += g.ReportedHours * price
		if usedWithoutPod(g.GPUKey) {
			c.UnattributedGPUHours += free
			c.UnattributedCost += free * price
		} else {
			c.UnallocatedGPUHours += free
			c.UnallocatedCost += free * price
		}
		utilSum += min(1, g.AvgUtilization) * float64(g.UtilizationSteps)
		utilSteps += g.UtilizationSteps
	}
	if utilSteps > 0 {
		c.AvgUtilization = utilSum / float64(utilSteps)
	}
	c.EstimatedWaste = c.Waste + c.UnallocatedCost
	c.CapacityCostKnown = pr.Known() && c.CapacityUnpriced == nil
	if c.CapacityUnpriced != nil {
		c.CapacityUnpriced.Partial = pr.Known() && c.CapacityGPUHours-c.CapacityUnpriced.GPUHours > 1e-9
	}
	if slices.ContainsFunc(prev.GPUs, func(g fleet.GPU) bool { return in(g.Cluster) }) {
		p := &Hours{}
		for _, x := range prev.Allocations {
			if in(x.Cluster) {
				p.Add(x, pr)
			}
		}
		p.Finish(pr)
		c.Previous = p
		c.Change = ChangeOf(c.Hours, p)
	}
	return c
}

// heldByGPU sums the allocations' GPU-hours per physical GPU. The
// unallocated capacity is measured against these rather than the GPU's own
// figure so that allocated plus unallocated is exactly the capacity.
func heldByGPU(res *fleet.Result) map[fleet.GPUKey]float64 {
	held := map[fleet.GPUKey]float64{}
	for _, x := range res.Allocations {
		held[fleet.GPUKey{Cluster: x.Cluster, Node: x.Node, UUID: x.UUID}] += x.AllocatedGPUHours
	}
	return held
}
