package rollup

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// ModelFleet is the part of the fleet of one GPU model (of one cluster,
// where the store holds several).
type ModelFleet struct {
	Cluster             string  `json:"cluster,omitempty"`
	Model               string  `json:"model"`
	GPUs                int     `json:"gpus"`
	CapacityGPUHours    float64 `json:"capacity_gpu_hours"`
	AllocatedGPUHours   float64 `json:"allocated_gpu_hours"`
	UnallocatedGPUHours float64 `json:"unallocated_gpu_hours"`
	// UnattributedGPUHours is as Cluster's.
	UnattributedGPUHours float64  `json:"unattributed_gpu_hours"`
	AvgUtilization       float64  `json:"avg_utilization"`
	PricePerHour         *float64 `json:"price_per_hour"`
	// PriceSource says where the price comes from: the table's file and
	// date, and a discount and where it was set.
	PriceSource string  `json:"price_source,omitempty"`
	Cost        float64 `json:"cost"`
	// CostKnown is false without a price: Cost is then unknown, not 0.
	CostKnown bool `json:"cost_known"`
}

// models are the fleet's rows by GPU model: a model's GPUs in two
// clusters are two rows.
func models(cur *fleet.Result, pr *Pricer, usedWithoutPod func(fleet.GPUKey) bool) []ModelFleet {
	held := heldByGPU(cur)
	// A model's GPUs in two clusters are two rows.
	type modelKey struct{ cluster, model string }
	byModel := map[modelKey]*ModelFleet{}
	steps := map[modelKey]int{}
	for _, g := range cur.GPUs {
		k := modelKey{g.Cluster, g.Model}
		m := byModel[k]
		if m == nil {
			m = &ModelFleet{Model: g.Model, Cluster: g.Cluster}
			if price, ok := pr.PerHour(g.Model); ok {
				m.PricePerHour, m.PriceSource, m.CostKnown = &price, pr.Prices().Source(g.Model), true
			}
			byModel[k] = m
		}
		m.GPUs++
		m.CapacityGPUHours += g.ReportedHours
		m.AllocatedGPUHours += min(g.ReportedHours, held[g.GPUKey])
		if usedWithoutPod(g.GPUKey) {
			m.UnattributedGPUHours += max(0, g.ReportedHours-held[g.GPUKey])
		} else {
			m.UnallocatedGPUHours += max(0, g.ReportedHours-held[g.GPUKey])
		}
		m.AvgUtilization += min(1, g.AvgUtilization) * float64(g.UtilizationSteps)
		steps[k] += g.UtilizationSteps
		if m.PricePerHour != nil {
			m.Cost += g.ReportedHours * *m.PricePerHour
		}
	}
	out := make([]ModelFleet, 0, len(byModel))
	for k, m := range byModel {
		if n := steps[k]; n > 0 {
			m.AvgUtilization /= float64(n)
		}
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b ModelFleet) int {
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.Model, b.Model))
	})
	return out
}
