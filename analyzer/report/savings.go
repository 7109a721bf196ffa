package report

import (
	"fmt"

	"github.com/gpulens/gpulens/vocab"
)

// Savings are the report's two savings, each a month, both read off the
// consolidation plan of the fleet after the week's advice ('gpulens plan',
// Consolidation): what acting banks, and what it frees for other work.
// There is no third: the findings' own savings (Findings.MonthlySavings)
// are GPU time, which leaves the bill only when a node goes, and the plan
// says which nodes do. Nil where the report has no plan.
type Savings struct {
	// Banked is the price a month of the nodes the plan frees (negative
	// where the layout needs more nodes): off the bill when they go. Nil
	// where no pool is priced. NodesFreed counts them.
	Banked     *float64 `json:"banked_monthly"`
	NodesFreed int      `json:"nodes_freed"`
	// CapacityFreedGPUs are the GPUs left free on the nodes that stay, and
	// CapacityFreed their price a month (nil without a price): capacity
	// for other work, still on the bill.
	CapacityFreedGPUs int      `json:"capacity_freed_gpus"`
	CapacityFreed     *float64 `json:"capacity_freed_monthly"`
	// Unavailable says why there is no plan to read them off, where there
	// is none; both figures are then unknown.
	Unavailable string `json:"unavailable,omitempty"`
}

// SavingsOf are c's two savings: the plan's totals, the same figures
// 'gpulens plan' prints.
func SavingsOf(c *Consolidation) *Savings {
	if c == nil {
		return nil
	}
	if c.Unavailable != "" {
		return &Savings{Unavailable: c.Unavailable}
	}
	s := &Savings{NodesFreed: c.NodesToday - c.NodesNeeded, CapacityFreedGPUs: c.CapacityFreedGPUs}
	if c.SavingKnown {
		banked, freed := c.MonthlySaving, c.CapacityFreedMonthly
		s.Banked, s.CapacityFreed = &banked, &freed
	}
	return s
}

// perMonth is a figure of the window scaled to a month (730 h), the one
// period of every money figure the report leads with.
func (r *Report) perMonth(v float64) float64 {
	if r.Window.Hours <= 0 {
		return 0
	}
	return v / r.Window.Hours * vocab.HoursPerMonth
}

// bankedCell and capacityCell are the two savings in words, for the
// summary; known only with the plan's prices.
func (r *Report) bankedCell() string {
	s := r.Savings
	switch {
	case s == nil:
		return "unknown: no consolidation plan"
	case s.Unavailable != "":
		return "unknown: no consolidation plan (" + s.Unavailable + ")"
	case s.Banked == nil || !r.CostKnown:
		return fmt.Sprintf("unknown: %d nodes freed, at no known price", s.NodesFreed)
	case s.NodesFreed < 0:
		return fmt.Sprintf("%s (the layout needs %d more nodes)", r.money(*s.Banked), -s.NodesFreed)
	}
	return fmt.Sprintf("%s (%d of %d nodes freed)", r.money(*s.Banked), s.NodesFreed, r.Consolidation.NodesToday)
}

func (r *Report) capacityCell() string {
	s := r.Savings
	switch {
	case s == nil || s.Unavailable != "":
		return "unknown: no consolidation plan"
	case s.CapacityFreed == nil || !r.CostKnown:
		return fmt.Sprintf("%d GPUs, at no known price", s.CapacityFreedGPUs)
	}
	return fmt.Sprintf("%d GPUs, worth %s (still on the bill until a node goes)", s.CapacityFreedGPUs, r.money(*s.CapacityFreed))
}
