package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/recommend"
)

// TopRecommendations is how many recommendations a report lists.
const TopRecommendations = 10

// Input is what a report is built from: an analysis's results, as plain
// values, so that the report does not depend on whoever ran the analysis.
type Input struct {
	// Schema names the metric schema read.
	Schema string
	// Current is the window reported on, Previous the one before it.
	Current, Previous *query.Result
	// Comparable says Previous has enough data for a change to be shown;
	// when false its figures are left out.
	Comparable bool
	// Findings may be nil: the report then lists none.
	Findings *findings.Result
	// Team names a namespace's team; nil means the namespace.
	Team func(namespace string) string
	// Timeline may be nil: the report then has no charts.
	Timeline *query.Timeline
	// Notes say what the analysis left out, in words.
	Notes []string
}

// Build computes the report of a. prices may be nil: dollar figures are
// then zero with CostKnown false.
func Build(a Input, prices *recommend.Prices) *Report {
	pr := newPricer(prices)
	r := &Report{
		Window:    window(a.Current.Window),
		Previous:  window(a.Previous.Window),
		Schema:    a.Schema,
		CostKnown: prices != nil,
		Currency:  "USD",
	}
	if prices != nil {
		r.Currency, r.PricesDate = cmp.Or(prices.Currency, "USD"), prices.Date
	}
	teamOf := a.Team
	if teamOf == nil {
		teamOf = func(ns string) string { return ns }
	}

	prev := a.Previous
	if !a.Comparable {
		prev = &query.Result{Window: a.Previous.Window}
	}
	r.Teams = teams(a.Current, prev, teamOf, pr)
	r.Cluster = cluster(a.Current, prev, r.Teams, pr)
	r.Fleet = fleet(a.Current, pr)
	r.Recommendations, r.Findings = findingsOf(a, teamOf)
	r.Coverage = coverage(a)
	r.Timeline = teamTimeline(a.Timeline, teamOf)
	r.UnpricedModels = pr.unpriced()
	return r
}

func window(w query.Window) Window {
	return Window{Start: w.Start.UTC(), End: w.End.UTC(), Hours: w.Duration().Hours()}
}

// pricer looks prices up once per model and remembers the models without
// one, so the report can say whose dollars are missing.
type pricer struct {
	p       *recommend.Prices
	missing map[string]bool
}

func newPricer(p *recommend.Prices) *pricer { return &pricer{p: p, missing: map[string]bool{}} }

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
func (u *GPUHours) add(x query.Allocation, pr *pricer) {
	u.AllocatedGPUHours += x.AllocatedGPUHours
	price, _ := pr.perHour(x.Model)
	u.Cost += x.AllocatedGPUHours * price
	if x.UtilizationSteps == 0 {
		u.UnmeasuredGPUHours += x.AllocatedGPUHours
		return
	}
	used := x.AllocatedGPUHours * min(1, max(0, x.AvgUtilization))
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
}

func (u *GPUHours) finish() {
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
	}
	if cur.Efficiency != nil && prev.Efficiency != nil {
		p := 100 * (*cur.Efficiency - *prev.Efficiency)
		c.EfficiencyPoints = &p
	}
	return c
}

func teams(cur, prev *query.Result, teamOf func(string) string, pr *pricer) []Team {
	byTeam := map[string]*Team{}
	get := func(ns string) *Team {
		name := teamOf(ns)
		t := byTeam[name]
		if t == nil {
			t = &Team{Team: name}
			byTeam[name] = t
		}
		if !slices.Contains(t.Namespaces, ns) {
			t.Namespaces = append(t.Namespaces, ns)
		}
		return t
	}
	for _, x := range cur.Allocations {
		t := get(x.Namespace)
		t.Allocations++
		t.add(x, pr)
	}
	// The previous window counts only for teams that exist now: a team
	// that is gone has nothing to report on this week.
	hadPrev := len(prev.GPUs) > 0
	for _, x := range prev.Allocations {
		if t := byTeam[teamOf(x.Namespace)]; t != nil {
			if t.Previous == nil {
				t.Previous = &GPUHours{}
			}
			t.Previous.add(x, pr)
		}
	}
	out := make([]Team, 0, len(byTeam))
	for _, t := range byTeam {
		if hadPrev && t.Previous == nil {
			t.Previous = &GPUHours{} // it held nothing last week: a known zero
		}
		slices.Sort(t.Namespaces)
		t.finish()
		if t.Previous != nil {
			t.Previous.finish()
		}
		t.Change = change(t.GPUHours, t.Previous)
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b Team) int {
		return cmp.Or(cmp.Compare(b.AllocatedGPUHours, a.AllocatedGPUHours), strings.Compare(a.Team, b.Team))
	})
	return out
}

func cluster(cur, prev *query.Result, teams []Team, pr *pricer) Cluster {
	c := Cluster{GPUs: len(cur.GPUs)}
	for _, t := range teams {
		c.sum(t.GPUHours)
	}
	c.finish()
	held := heldByGPU(cur)
	var utilSum float64
	var utilSteps int
	for _, g := range cur.GPUs {
		price, _ := pr.perHour(g.Model)
		free := max(0, g.ReportedHours-held[g.GPUKey])
		c.CapacityGPUHours += g.ReportedHours
		c.UnallocatedGPUHours += free
		c.CapacityCost += g.ReportedHours * price
		c.UnallocatedCost += free * price
		utilSum += min(1, g.AvgUtilization) * float64(g.UtilizationSteps)
		utilSteps += g.UtilizationSteps
	}
	if utilSteps > 0 {
		c.AvgUtilization = utilSum / float64(utilSteps)
	}
	c.EstimatedWaste = c.Waste + c.UnallocatedCost
	if len(prev.GPUs) > 0 {
		p := &GPUHours{}
		for _, x := range prev.Allocations {
			p.add(x, pr)
		}
		p.finish()
		c.Previous = p
		c.Change = change(c.GPUHours, p)
	}
	return c
}

// heldByGPU sums the allocations' GPU-hours per physical GPU. The
// unallocated capacity is measured against these rather than the GPU's own
// figure so that allocated plus unallocated is exactly the capacity.
func heldByGPU(res *query.Result) map[query.GPUKey]float64 {
	held := map[query.GPUKey]float64{}
	for _, x := range res.Allocations {
		held[query.GPUKey{Node: x.Node, UUID: x.UUID}] += x.AllocatedGPUHours
	}
	return held
}

func fleet(cur *query.Result, pr *pricer) []ModelFleet {
	held := heldByGPU(cur)
	byModel := map[string]*ModelFleet{}
	steps := map[string]int{}
	for _, g := range cur.GPUs {
		m := byModel[g.Model]
		if m == nil {
			m = &ModelFleet{Model: g.Model}
			if price, ok := pr.perHour(g.Model); ok {
				m.PricePerHour, m.PriceSource = &price, pr.p.Source(g.Model)
			}
			byModel[g.Model] = m
		}
		m.GPUs++
		m.CapacityGPUHours += g.ReportedHours
		m.AllocatedGPUHours += min(g.ReportedHours, held[g.GPUKey])
		m.UnallocatedGPUHours += max(0, g.ReportedHours-held[g.GPUKey])
		m.AvgUtilization += min(1, g.AvgUtilization) * float64(g.UtilizationSteps)
		steps[g.Model] += g.UtilizationSteps
		if m.PricePerHour != nil {
			m.Cost += g.ReportedHours * *m.PricePerHour
		}
	}
	out := make([]ModelFleet, 0, len(byModel))
	for _, m := range byModel {
		if n := steps[m.Model]; n > 0 {
			m.AvgUtilization /= float64(n)
		}
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b ModelFleet) int { return strings.Compare(a.Model, b.Model) })
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
		c.AllocationPaths[w.AllocationPath]++
	}
	c.Notes = append(slices.Clone(res.Notes), a.Notes...)
	return c
}
