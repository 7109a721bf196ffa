package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/rollup"
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
	// Ledger and Teams are the analysis's money (pipeline.Analysis.Ledger
	// and Teams), which the report renders; a report of an Input without
	// them (its tests') charges Current and rolls its teams up itself.
	Ledger *ledger.Ledger
	Teams  []rollup.Team
}

// Build computes the report of a. prices may be nil: dollar figures are
// then zero with CostKnown false.
func Build(a Input, prices *price.Prices) *Report {
	pr := rollup.NewPricer(prices)
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
	r.Ledger, r.CostBasis, r.Teams = a.Ledger, cmp.Or(a.CostBasis, ledger.Allocation), a.Teams
	if r.Ledger == nil {
		r.Ledger = ledger.Build(a.Current, prices)
	}
	if r.Teams == nil {
		r.Teams = rollup.Teams(rollup.Input{Current: a.Current, Previous: prev, Team: teamOf, Ledger: r.Ledger}, pr)
	} else {
		priceTeams(a.Current, prev, r.Teams, teamOf, pr)
	}
	r.Cluster = summary(a.Current, prev, r.Teams, pr, a.Findings.UsedWithoutPod, func(string) bool { return true })
	r.Fleet = fleetRows(a.Current, pr, a.Findings.UsedWithoutPod)
	var savings map[string]float64
	var unpricedSavings map[string]*rollup.Unpriced
	r.Recommendations, r.Findings, savings, unpricedSavings = findingsOf(a, teamOf)
	for _, c := range clustersOf(a.Current) {
		r.Clusters = append(r.Clusters, ClusterSummary{Name: c, MonthlySavings: savings[c], SavingsUnpriced: unpricedSavings[c],
			Cluster: summary(a.Current, prev, r.Teams, pr, a.Findings.UsedWithoutPod, func(x string) bool { return x == c })})
	}
	r.Coverage = coverage(a)
	r.Timeline = teamTimeline(a.Timeline, teamOf)
	r.UnpricedModels = pr.Missing()
	return r
}

// priceTeams looks up the price of every allocation the analysis's teams
// rolled up, so that UnpricedModels names the models they found without
// one, as it names those of the report's own figures.
func priceTeams(cur, prev *fleet.Result, teams []rollup.Team, teamOf func(cluster, namespace string) string, pr *rollup.Pricer) {
	type teamKey struct{ cluster, team string }
	held := map[teamKey]bool{}
	for _, t := range teams {
		held[teamKey{t.Cluster, t.Team}] = true
	}
	for _, x := range cur.Allocations {
		pr.PerHour(x.Model)
	}
	for _, x := range prev.Allocations {
		if held[teamKey{x.Cluster, teamOf(x.Cluster, x.Namespace)}] {
			pr.PerHour(x.Model)
		}
	}
}

func window(w fleet.Window, stale []fleet.NodeSeen) Window {
	out := Window{Start: w.Start.UTC(), End: w.End.UTC(), Hours: w.Duration().Hours()}
	for _, n := range stale {
		out.DataStops = append(out.DataStops, DataStop{Cluster: n.Cluster, Node: n.Node, LastSeen: n.LastSeen.UTC(), AbsentHours: n.SinceLastSeen.Hours()})
	}
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
func summary(cur, prev *fleet.Result, teams []rollup.Team, pr *rollup.Pricer, usedWithoutPod func(fleet.GPUKey) bool, in func(cluster string) bool) Cluster {
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
			c.CapacityUnpriced = rollup.AddUnpriced(c.CapacityUnpriced, g.Model, 1, g.ReportedHours, 0)
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
		p := &rollup.Hours{}
		for _, x := range prev.Allocations {
			if in(x.Cluster) {
				p.Add(x, pr)
			}
		}
		p.Finish(pr)
		c.Previous = p
		c.Change = rollup.ChangeOf(c.Hours, p)
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

func fleetRows(cur *fleet.Result, pr *rollup.Pricer, usedWithoutPod func(fleet.GPUKey) bool) []ModelFleet {
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
	c.AbsentGPUs = absentGPUs(res) // absent.go
	c.Notes = append(slices.Clone(res.Notes), a.Notes...)
	return c
}
