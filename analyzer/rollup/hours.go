package rollup

import (
	"cmp"
	"slices"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// Hours are the allocation figures, in GPU-hours and money, shared by a
// team and a cluster's summary.
type Hours struct {
	AllocatedGPUHours  float64  `json:"allocated_gpu_hours"`
	UsedGPUHours       float64  `json:"used_gpu_hours"`
	IdleGPUHours       float64  `json:"idle_gpu_hours"`
	UnmeasuredGPUHours float64  `json:"unmeasured_gpu_hours"`
	Efficiency         *float64 `json:"efficiency"` // used / measured; nil when nothing was measured
	// Cost and Waste are of the priced hours. CostKnown is false when
	// any allocated hour had no price: Unpriced then says which, and Cost
	// and Waste leave them out (a lower bound when Unpriced.Partial, else
	// unknown, not zero).
	Cost      float64   `json:"cost"`
	Waste     float64   `json:"waste"`
	CostKnown bool      `json:"cost_known"`
	Unpriced  *Unpriced `json:"unpriced,omitempty"`
}

// Unpriced is the part of a money figure that has no price: the GPUs or
// GPU-hours of models the price table lacks, or the findings whose savings
// are unknown. Partial says some of the figure was priced, and the figure
// is that part; without it the figure is unknown.
type Unpriced struct {
	GPUs     int      `json:"gpus,omitempty"`
	GPUHours float64  `json:"gpu_hours,omitempty"`
	Findings int      `json:"findings,omitempty"`
	Models   []string `json:"models"`
	Partial  bool     `json:"partial"`
}

// Change is the current window minus the previous one.
type Change struct {
	AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
	UsedGPUHours      float64 `json:"used_gpu_hours"`
	// EfficiencyPoints is in percentage points; nil when either window
	// has no measured use.
	EfficiencyPoints *float64 `json:"efficiency_points"`
	// Cost and Waste are known (CostKnown) only where both windows'
	// are: a difference with an unknown side is unknown.
	Cost      float64 `json:"cost"`
	Waste     float64 `json:"waste"`
	CostKnown bool    `json:"cost_known"`
}

// AddUnpriced is u with a model's GPUs, GPU-hours or findings added to
// what has no price; a copy, so that adding to one figure never changes
// another that shared u.
func AddUnpriced(u *Unpriced, model string, gpus int, hours float64, findings int) *Unpriced {
	out := &Unpriced{}
	if u != nil {
		*out = *u
		out.Models = slices.Clone(u.Models)
	}
	out.GPUs += gpus
	out.GPUHours += hours
	out.Findings += findings
	if model = cmp.Or(model, "GPUs of unknown model"); !slices.Contains(out.Models, model) {
		out.Models = append(out.Models, model)
		slices.Sort(out.Models)
	}
	return out
}

// MergeUnpriced is a and b's unpriced parts together, a copy.
func MergeUnpriced(a, b *Unpriced) *Unpriced {
	if b == nil {
		return a
	}
	out := AddUnpriced(a, b.Models[0], b.GPUs, b.GPUHours, b.Findings)
	for _, m := range b.Models[1:] {
		out = AddUnpriced(out, m, 0, 0, 0)
	}
	return out
}

// Add adds one allocation to h. Utilization is capped at 1: a time-sliced
// tenant's utilization is of the whole device and can read above its share,
// but nobody uses more than they hold.
func (h *Hours) Add(x fleet.Allocation, pr *Pricer) {
	h.AllocatedGPUHours += x.AllocatedGPUHours
	price, ok := pr.PerHour(x.Model)
	if !ok {
		h.Unpriced = AddUnpriced(h.Unpriced, x.Model, 0, x.AllocatedGPUHours, 0)
	}
	h.Cost += x.AllocatedGPUHours * price
	// The ledger's usage rule (fleet.Allocation.UsedGPUHours, hour by
	// hour where the analysis folded hours), so that the idle allocations'
	// waste is the ledger's usage-basis idle.
	used, measured := x.UsedGPUHours()
	if !measured {
		h.UnmeasuredGPUHours += x.AllocatedGPUHours
		return
	}
	h.UsedGPUHours += used
	h.IdleGPUHours += x.AllocatedGPUHours - used
	h.Waste += (x.AllocatedGPUHours - used) * price
}

// Sum adds o to h.
func (h *Hours) Sum(o Hours) {
	h.AllocatedGPUHours += o.AllocatedGPUHours
	h.UsedGPUHours += o.UsedGPUHours
	h.IdleGPUHours += o.IdleGPUHours
	h.UnmeasuredGPUHours += o.UnmeasuredGPUHours
	h.Cost += o.Cost
	h.Waste += o.Waste
	h.Unpriced = MergeUnpriced(h.Unpriced, o.Unpriced)
}

// Finish computes the efficiency, and whether the money is known: a
// price table, and a price for every hour.
func (h *Hours) Finish(pr *Pricer) {
	h.CostKnown = pr.Known() && h.Unpriced == nil
	if h.Unpriced != nil {
		h.Unpriced.Partial = pr.Known() && h.AllocatedGPUHours-h.Unpriced.GPUHours > 1e-9
	}
	if measured := h.AllocatedGPUHours - h.UnmeasuredGPUHours; measured > 0 {
		e := h.UsedGPUHours / measured
		h.Efficiency = &e
	}
}

// ChangeOf is cur minus prev; nil without a previous window.
func ChangeOf(cur Hours, prev *Hours) *Change {
	if prev == nil {
		return nil
	}
	c := &Change{
		AllocatedGPUHours: cur.AllocatedGPUHours - prev.AllocatedGPUHours,
		UsedGPUHours:      cur.UsedGPUHours - prev.UsedGPUHours,
		Cost:              cur.Cost - prev.Cost,
		Waste:             cur.Waste - prev.Waste,
		CostKnown:         cur.CostKnown && prev.CostKnown,
	}
	if cur.Efficiency != nil && prev.Efficiency != nil {
		p := 100 * (*cur.Efficiency - *prev.Efficiency)
		c.EfficiencyPoints = &p
	}
	return c
}
