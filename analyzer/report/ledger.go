package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/rollup"
)

// teamCost is the team's cost on the report's basis: held GPU-hours at
// their price on the allocation basis, as before the ledger; the ledger's
// usage charge on the usage basis.
func (r *Report) teamCost(t rollup.Team) float64 {
	if r.CostBasis == ledger.Usage {
		return t.UsageCost
	}
	return t.Cost
}

func (r *Report) costHeader() string {
	if r.CostBasis == ledger.Usage {
		return "Cost (usage basis)"
	}
	return "Cost"
}

// ledgerTotals sums the ledger's GPUs of one cluster, or of every cluster
// where all is set, on basis b: money over the priced GPUs, hours over all.
func (r *Report) ledgerTotals(b ledger.Basis, cluster string, all bool) ledger.Totals {
	if all {
		return r.Ledger.Totals(b)
	}
	var t ledger.Totals
	add := func(a *ledger.Amount, x ledger.Amount) { a.GPUHours += x.GPUHours; a.Cost += x.Cost }
	for _, g := range r.Ledger.GPUs {
		if g.Cluster != cluster {
			continue
		}
		rem := g.Remainder(b)
		add(&t.Cost, ledger.Amount{GPUHours: g.Hours, Cost: g.Cost})
		add(&t.Idle, rem.Idle)
		add(&t.Unallocated, rem.Unallocated)
		for _, x := range g.Tenants {
			add(&t.Attributed, x.On(b))
		}
	}
	return t
}

// reconciliationSection shows that the tenants' charges, the idle and the
// unallocated add up to the fleet's cost, on both bases, to the cent.
func (r *Report) reconciliationSection() section {
	s := section{ID: "reconciliation", Title: "Reconciliation", Empty: "No GPUs in the window.",
		Header: r.withCluster("Cluster", []string{"Basis", "Charged to tenants", "Idle", "Unallocated", "Cost of the GPUs"}),
		Intro: "Every GPU's cost is charged to its tenants: on the allocation basis for what each held, on the usage basis for what each used, " +
			"the rest of what they held being idle; the time nobody held is unallocated. Per GPU over the window, the charges and the remainder are its price × hours, " +
			"so the columns add up to the cost, to the cent. Tenants that held more than their GPU's hours between them (time slices, HAMi limits past the device) " +
			"are scaled down in proportion. The teams' cost column is on the " + string(r.CostBasis) + " basis (--cost-basis)."}
	if r.Ledger == nil {
		return s
	}
	if r.Ledger.ByHour() {
		s.Intro = strings.Replace(s.Intro, "Per GPU over the window, the charges and the remainder are its price × hours",
			"For every GPU and every hour, the charges and the remainder are its price × the part of the hour it was reported (-o ledger-csv lists them)", 1)
		s.Intro = strings.Replace(s.Intro, "held more than their GPU's hours between them", "held more than their GPU's time in an hour between them", 1)
	}
	if !r.CostKnown {
		s.Intro += " No price table: in GPU-hours."
	} else if len(r.Ledger.Unpriced) > 0 {
		s.Intro += " No price for " + strings.Join(r.Ledger.Unpriced, ", ") + ": their GPUs are left out."
	}
	if n := r.Ledger.Orphans; n > 0 {
		s.Intro += fmt.Sprintf(" %d allocations were on GPUs no exporter reported: nothing to charge them from, left out.", n)
	}
	row := func(cluster string, all bool) {
		priced := slices.ContainsFunc(r.Ledger.GPUs, func(g ledger.GPU) bool { return g.PriceKnown && (all || g.Cluster == cluster) })
		for _, b := range ledger.Bases {
			t := r.ledgerTotals(b, cluster, all)
			cells := []string{string(b)}
			switch {
			case r.CostKnown && !priced:
				// No GPU of it has a price: unknown, never $0.
				for range 4 {
					cells = append(cells, unknownMoney(r.Ledger.Unpriced))
				}
			case r.CostKnown:
				c, total := ledger.Cents(t.Attributed.Cost, t.Idle.Cost, t.Unallocated.Cost)
				for _, v := range append(c, total) {
					cells = append(cells, r.moneyDigits(float64(v)/100, 2))
				}
			default:
				for _, v := range []float64{t.Attributed.GPUHours, t.Idle.GPUHours, t.Unallocated.GPUHours, t.Cost.GPUHours} {
					cells = append(cells, gpuHours(v)+" GPU-h")
				}
			}
			s.Rows = append(s.Rows, r.withCluster(clusterCell(cluster), cells))
		}
	}
	if len(r.Ledger.GPUs) == 0 {
		return s
	}
	for _, c := range r.Clusters {
		row(c.Name, false)
	}
	if r.clustered() {
		row("all clusters", true)
		return s
	}
	row("", true)
	return s
}
