package report

import (
	"cmp"
	"slices"

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
	// Money is the analysis's (pipeline.Analysis.Money), built once:
	// the report renders it and prices nothing again. Required.
	Money *rollup.Money
}

// Build computes the report of a, whose money the analysis built. prices
// are the table it was priced with, and may be nil: dollar figures are
// then zero with CostKnown false.
func Build(a Input, prices *price.Prices) *Report {
	m := a.Money
	r := &Report{
		Window:         window(a.Current.Window, a.Current.Stale()),
		Previous:       window(a.Previous.Window, nil),
		Schema:         a.Schema,
		CostKnown:      prices != nil,
		Currency:       "USD",
		Cluster:        m.Fleet,
		Fleet:          m.Models,
		Teams:          m.Teams,
		Ledger:         m.Ledger,
		CostBasis:      cmp.Or(a.CostBasis, ledger.Allocation),
		UnpricedModels: m.Unpriced,
	}
	if prices != nil {
		r.Currency, r.PricesDate = cmp.Or(prices.Currency, "USD"), prices.Date
	}
	teamOf := a.Team
	if teamOf == nil {
		teamOf = func(_, ns string) string { return ns }
	}
	var savings map[string]float64
	var unpricedSavings map[string]*rollup.Unpriced
	r.Recommendations, r.Findings, savings, unpricedSavings = findingsOf(a, teamOf)
	for _, c := range m.Clusters {
		r.Clusters = append(r.Clusters, ClusterSummary{Name: c.Name, Cluster: c.Cluster, MonthlySavings: savings[c.Name], SavingsUnpriced: unpricedSavings[c.Name]})
	}
	r.Coverage = coverage(a)
	r.Timeline = teamTimeline(a.Timeline, teamOf)
	return r
}

func window(w fleet.Window, stale []fleet.NodeSeen) Window {
	out := Window{Start: w.Start.UTC(), End: w.End.UTC(), Hours: w.Duration().Hours()}
	for _, n := range stale {
		out.DataStops = append(out.DataStops, DataStop{Cluster: n.Cluster, Node: n.Node, LastSeen: n.LastSeen.UTC(), AbsentHours: n.SinceLastSeen.Hours()})
	}
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
