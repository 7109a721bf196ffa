package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/price"
)

// TopRecommendations is how many recommendations a report lists.
const TopRecommendations = 10

// Input is what a report is built from: an analysis's results, as plain
// values, so that the report does not depend on whoever ran the analysis.
type Input struct {
	// Schema names the metric schema read.
	Schema string
	// Current is the window reported on, Previous the one before it.
	Current, Previous *fleet.Result
	// Comparable says Previous has enough data for a change to be shown;
	// when false its figures are left out.
	Comparable bool
	// Findings may be nil: the report then lists none.
	Findings *findings.Result
	// Team names the team of a namespace of a cluster (the value of the
	// store's cluster label; "" where the store holds one cluster); nil
	// means the namespace. The same namespace in two clusters may belong
	// to two teams, each cluster's inventory saying.
	Team func(cluster, namespace string) string
	// Timeline may be nil: the report then has no charts.
	Timeline *fleet.Timeline
	// Notes say what the analysis left out, in words.
	Notes []string
	// CostBasis is the basis of the teams' cost column (ledger.Allocation
	// when empty).
	CostBasis ledger.Basis
	// Ledger is the analysis's (pipeline.Analysis.Ledger), which the
	// report renders; a report of an Input without one (its tests')
	// charges Current itself.
	Ledger *ledger.Ledger
}

// Build computes the report of a. prices may be nil: dollar figures are
// then zero with CostKnown false.
func Build(a Input, prices *price.Prices) *Report {
	pr := newPricer(prices)
	r := &Report{
		Window:    window(a.Current.Window, a.Current.Stale()),
		Previous:  window(a.Previous.Window, nil),
		Schema:    a.Schema,
		CostKnown: prices != nil,
		Currency:  "USD",
	}
	if prices != nil {
		r.Currency, r.PricesDate = cmp.Or(prices.Currency, "USD"), prices.Date
	}
	teamOf := a.Team
	if teamOf == nil {
		teamOf = func(_, ns string) string { return ns }
	}

	prev := a.Previous
	if !a.Comparable {
		prev = &fleet.Result{Window: a.Previous.Window}
	}
	r.Teams = teams(a.Current, prev, teamOf, pr)
	r.Ledger, r.CostBasis = a.Ledger, cmp.Or(a.CostBasis, ledger.Allocation)
	if r.Ledger == nil {
		r.Ledger = ledger.Build(a.Current, prices)
	}
	r.Teams = chargeTeams(r.Teams, r.Ledger, teamOf, pr)
	r.Cluster = summary(a.Current, prev, r.Teams, pr, a.Findings.UsedWithoutPod, func(string) bool { return true })
	r.Fleet = fleetRows(a.Current, pr, a.Findings.UsedWithoutPod)
	var savings map[string]float64
	var unpricedSavings map[string]*Unpriced
	r.Recommendations, r.Findings, savings, unpricedSavings = findingsOf(a, teamOf)
	for _, c := range clustersOf(a.Current) {
		r.Clusters = append(r.Clusters, ClusterSummary{Name: c, MonthlySavings: savings[c], SavingsUnpriced: unpricedSavings[c],
			Cluster: summary(a.Current, prev, r.Teams, pr, a.Findings.UsedWithoutPod, func(x string) bool { return x == c })})
	}
	r.Coverage = coverage(a)
	r.Timeline = teamTimeline(a.Timeline, teamOf)
	r.UnpricedModels = pr.unpriced()
	return r
}

func window(w fleet.Window, stale []fleet.NodeSeen) Window {
	out := Window{Start: w.Start.UTC(), End: w.End.UTC(), Hours: w.Duration().Hours()}
	for _, n := range stale {
		out.DataStops = append(out.DataStops, DataStop{Cluster: n.Cluster, Node: n.Node, LastSeen: n.LastSeen.UTC(), AbsentHours: n.SinceLastSeen.Hours()})
	}
	return out
}

// pricer looks prices up once per model and remembers the models without
// one, so the report can say whose dollars are missing.
type pricer struct {
	p       *price.Prices
	missing map[string]bool
}

func newPricer(p *price.Prices) *pricer { return &pricer{p: p, missing: map[string]bool{}} }

func (p *pricer) perHour(model string) (float64, bool) {
	if p.p == nil {
		return 0, false
	}
	v, err := p.p.PerHour(model)
	if err != nil {
		p.missing[model] = true
		return 0, false
	}
	return v, true
}

// addUnpriced is u with a model's GPUs, GPU-hours or findings added to
// what has no price; a copy, so that adding to one figure never changes
// another that shared u.
func addUnpriced(u *Unpriced, model string, gpus int, hours float64, findings int) *Unpriced {
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

// mergeUnpriced is a and b's unpriced parts together, a copy.
func mergeUnpriced(a, b *Unpriced) *Unpriced {
	if b == nil {
		return a
	}
	out := addUnpriced(a, b.Models[0], b.GPUs, b.GPUHours, b.Findings)
	for _, m := range b.Models[1:] {
		out = addUnpriced(out, m, 0, 0, 0)
	}
	return out
}

func (p *pricer) unpriced() []string {
	out := make([]string, 0, len(p.missing))
	for m := range p.missing {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// usage adds one allocation to u. Utilization is capped at 1: a time-sliced
// tenant's utilization is of the whole device and can read above its share,
// but nobody uses more than they hold.
func (u *GPUHours) add(x fleet.Allocation, pr *pricer) {
	u.AllocatedGPUHours += x.AllocatedGPUHours
	price, ok := pr.perHour(x.Model)
	if !ok {
		u.Unpriced = addUnpriced(u.Unpriced, x.Model, 0, x.AllocatedGPUHours, 0)
	}
	u.Cost += x.AllocatedGPUHours * price
	// The ledger's usage rule (fleet.Allocation.UsedGPUHours, hour by
	// hour where the analysis folded hours), so that the idle allocations'
	// waste is the ledger's usage-basis idle.
	used, measured := x.UsedGPUHours()
	if !measured {
		u.UnmeasuredGPUHours += x.AllocatedGPUHours
		return
	}
	u.UsedGPUHours += used
	u.IdleGPUHours += x.AllocatedGPUHours - used
	u.Waste += (x.AllocatedGPUHours - used) * price
}

func (u *GPUHours) sum(o GPUHours) {
	u.AllocatedGPUHours += o.AllocatedGPUHours
	u.UsedGPUHours += o.UsedGPUHours
	u.IdleGPUHours += o.IdleGPUHours
	u.UnmeasuredGPUHours += o.UnmeasuredGPUHours
	u.Cost += o.Cost
	u.Waste += o.Waste
	u.Unpriced = mergeUnpriced(u.Unpriced, o.Unpriced)
}

// finish computes the efficiency, and whether the money is known: a
// price table, and a price for every hour.
func (u *GPUHours) finish(pr *pricer) {
	u.CostKnown = pr.p != nil && u.Unpriced == nil
	if u.Unpriced != nil {
		u.Unpriced.Partial = pr.p != nil && u.AllocatedGPUHours-u.Unpriced.GPUHours > 1e-9
	}
	if measured := u.AllocatedGPUHours - u.UnmeasuredGPUHours; measured > 0 {
		e := u.UsedGPUHours / measured
		u.Efficiency = &e
	}
}

func change(cur GPUHours, prev *GPUHours) *Change {
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

// teamKey is a team of a cluster: two clusters' team-a are two teams.
type teamKey struct{ cluster, team string }

func teams(cur, prev *fleet.Result, teamOf func(cluster, namespace string) string, pr *pricer) []Team {
	byTeam := map[teamKey]*Team{}
	get := func(cluster, ns string) *Team {
		k := teamKey{cluster, teamOf(cluster, ns)}
		t := byTeam[k]
		if t == nil {
			t = &Team{Team: k.team, Cluster: cluster}
			byTeam[k] = t
		}
		if !slices.Contains(t.Namespaces, ns) {
			t.Namespaces = append(t.Namespaces, ns)
		}
		return t
	}
	for _, x := range cur.Allocations {
		t := get(x.Cluster, x.Namespace)
		t.Allocations++
		t.add(x, pr)
	}
	// The previous window counts only for teams that exist now: a team
	// that is gone has nothing to report on this week. A cluster whose
	// GPUs reported then has known figures for it, zero for a team that
	// held nothing.
	hadPrev := map[string]bool{}
	for _, g := range prev.GPUs {
		hadPrev[g.Cluster] = true
	}
	for _, x := range prev.Allocations {
		if t := byTeam[teamKey{x.Cluster, teamOf(x.Cluster, x.Namespace)}]; t != nil {
			if t.Previous == nil {
				t.Previous = &GPUHours{}
			}
			t.Previous.add(x, pr)
		}
	}
	out := make([]Team, 0, len(byTeam))
	for _, t := range byTeam {
		if hadPrev[t.Cluster] && t.Previous == nil {
			t.Previous = &GPUHours{} // it held nothing last week: a known zero
		}
		slices.Sort(t.Namespaces)
		t.finish(pr)
		if t.Previous != nil {
			t.Previous.finish(pr)
		}
		t.Change = change(t.GPUHours, t.Previous)
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b Team) int {
		return cmp.Or(cmp.Compare(b.AllocatedGPUHours, a.AllocatedGPUHours), strings.Compare(a.Team, b.Team), strings.Compare(a.Cluster, b.Cluster))
	})
	return out
}

// clustersOf are the cluster label values res's GPUs and allocations
// carry, sorted; nil where they carry none (a store of one cluster), ""
// among them for the series without the label in a store that has it.
func clustersOf(res *fleet.Result) []string {
	var out []string
	named := false
	for _, g := range res.GPUs {
		out, named = append(out, g.Cluster), named || g.Cluster != ""
	}
	for _, x := range res.Allocations {
		out, named = append(out, x.Cluster), named || x.Cluster != ""
	}
	if !named {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// summary sums the part of the fleet in the clusters in says: all of it
// for the fleet-wide summary, one cluster for a ClusterSummary. The
// allocated figures are those of the teams (teams never span clusters),
// so the teams add up to the summary exactly.
//
// A GPU used while no pod held it (findings.Result.UsedWithoutPod) has a
// tenant the data cannot name: its time without an allocation is
// counted as unattributed, not as unallocated waste.
func summary(cur, prev *fleet.Result, teams []Team, pr *pricer, usedWithoutPod func(fleet.GPUKey) bool, in func(cluster string) bool) Cluster {
	c := Cluster{}
	for _, t := range teams {
		if in(t.Cluster) {
			c.sum(t.GPUHours)
		}
	}
	c.finish(pr)
	held := heldByGPU(cur)
	var utilSum float64
	var utilSteps int
	for _, g := range cur.GPUs {
		if !in(g.Cluster) {
			continue
		}
		price, ok := pr.perHour(g.Model)
		if !ok {
			c.CapacityUnpriced = addUnpriced(c.CapacityUnpriced, g.Model, 1, g.ReportedHours, 0)
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
	c.CapacityCostKnown = pr.p != nil && c.CapacityUnpriced == nil
	if c.CapacityUnpriced != nil {
		c.CapacityUnpriced.Partial = pr.p != nil && c.CapacityGPUHours-c.CapacityUnpriced.GPUHours > 1e-9
	}
	if slices.ContainsFunc(prev.GPUs, func(g fleet.GPU) bool { return in(g.Cluster) }) {
		p := &GPUHours{}
		for _, x := range prev.Allocations {
			if in(x.Cluster) {
				p.add(x, pr)
			}
		}
		p.finish(pr)
		c.Previous = p
		c.Change = change(c.GPUHours, p)
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

func fleetRows(cur *fleet.Result, pr *pricer, usedWithoutPod func(fleet.GPUKey) bool) []ModelFleet {
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
			if price, ok := pr.perHour(g.Model); ok {
				m.PricePerHour, m.PriceSource, m.CostKnown = &price, pr.p.Source(g.Model), true
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

func coverage(a Input) Coverage {
	res := a.Current
	c := Coverage{
		StepSeconds:   int(res.Window.Step.Seconds()),
		ExpectedSteps: res.ExpectedSteps,
		GPUs:          len(res.GPUs),
		Allocations:   len(res.Allocations),
		Workloads:     len(res.Workloads),
	}
	if a.Findings != nil {
		c.WorkloadSources = a.Findings.WorkloadSources
	}
	for _, g := range res.GPUs {
		c.AvgGPUCoverage += g.Coverage / float64(len(res.GPUs))
		if g.Steps >= res.ExpectedSteps {
			c.GPUsFullyCovered++
		}
	}
	for _, x := range res.Allocations {
		if x.UtilizationSteps > 0 {
			c.AllocationsWithUtilization++
		}
	}
	c.AllocationPaths = map[string]int{}
	for _, w := range res.Workloads {
		c.AllocationPaths[string(w.AllocationPath)]++
	}
	c.AbsentGPUs = absentGPUs(res) // absent.go
	c.Notes = append(slices.Clone(res.Notes), a.Notes...)
	return c
}
