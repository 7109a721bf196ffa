package series

import (
	"fmt"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/metricname"
	"github.com/gpulens/gpulens/analyzer/rollup"
	"github.com/gpulens/gpulens/vocab"
)

// Input is what one analysis gives the series.
type Input struct {
	Findings []findings.Finding
	// Teams are the analysis's team roll-ups (pipeline.Analysis.Teams),
	// and CostKnown says the report of it had a price table.
	Teams     []rollup.Team
	CostKnown bool
	// WindowHours is the length of the analysed window.
	WindowHours float64
	// Ledger is the same analysis's (the report's Ledger): the prices
	// and the fleet's cost; nil for none.
	Ledger *ledger.Ledger
	// Pools are the same report's plan's pools (report.Report.
	// Consolidation), whose two savings the series publish by cluster;
	// nil where there is no plan.
	Pools []Pool
}

// findingLabels are a finding's identity as a series. Pod and container
// are not among them: one series per workload survives a rollout. The
// cluster is, where the store holds several: two clusters' team-a/trainer
// are two series. It is absent, not empty, for a store of one cluster
// (metricname.Of leaves empty labels out), so its series read as they
// always have.
func findingLabels(f findings.Finding) []string {
	return []string{ClusterLabel, f.Cluster, "kind", string(f.Kind), "severity", string(f.Severity), "namespace", f.Namespace,
		"workload", f.Workload, "node", f.Node, "gpu_uuid", f.GPUUUID}
}

// ClusterLabel names the cluster on serve's series and alerts: the value
// of the store's cluster label (--cluster-label) the finding or team was
// analysed under, under the default label's name whatever the store's is.
// A Prometheus scraping serve adds its own external labels only where a
// series lacks them, so the analysed cluster stays.
const ClusterLabel = vocab.DefaultClusterLabel

// Build returns a new Set with the analysis's series. Findings with the
// same identity (several pods of one workload) share one series whose
// dollar figures are their sums.
func Build(in Input) *metrics.Set {
	s := metrics.NewSet()
	type sums struct {
		savings, cost float64
		known         bool
		// summary is the first finding's, and how many more share the
		// identity (pods of one workload).
		summary string
		more    int
		labels  []string
	}
	var order []string
	byName := map[string]*sums{}
	for _, f := range in.Findings {
		name := metricname.Of(vocab.SeriesFinding, findingLabels(f)...)
		g, ok := byName[name]
		if !ok {
			g = &sums{known: true, summary: f.Summary, labels: findingLabels(f)}
			byName[name] = g
			order = append(order, name)
		} else {
			g.more++
		}
		g.savings += f.MonthlySavingsUSD
		g.cost += f.MonthlyCostUSD
		g.known = g.known && f.CostKnown
	}
	for _, name := range order {
		g := byName[name]
		constant(s, name, 1)
		summary := g.summary
		if g.more > 0 {
			summary += fmt.Sprintf(" (and %d more of this workload's pods)", g.more)
		}
		constant(s, metricname.Of(vocab.SeriesFindingInfo, append(g.labels, "summary", summary)...), 1)
		if g.known {
			labels := name[len(vocab.SeriesFinding):]
			constant(s, vocab.SeriesFindingMonthlySavings+labels, g.savings)
			constant(s, vocab.SeriesFindingMonthlyCost+labels, g.cost)
		}
	}
	// Two clusters' team-a are two teams (Team.Cluster), and two
	// series: the same name registered twice would panic the Set.
	for _, t := range in.Teams {
		team := func(family string, more ...string) string {
			return metricname.Of(family, append([]string{ClusterLabel, t.Cluster, "team", t.Team}, more...)...)
		}
		constant(s, team(vocab.SeriesTeamGPUSeconds, "state", "allocated"), t.AllocatedGPUHours*3600)
		constant(s, team(vocab.SeriesTeamGPUSeconds, "state", "used"), t.UsedGPUHours*3600)
		constant(s, team(vocab.SeriesTeamGPUSeconds, "state", "idle"), t.IdleGPUHours*3600)
		if in.CostKnown && t.CostKnown && in.WindowHours > 0 {
			// A team holding a GPU without a price has no series: its
			// cost is unknown, and a partial sum would read as all of it.
			constant(s, team(vocab.SeriesTeamMonthlyCost), t.Cost/in.WindowHours*vocab.HoursPerMonth)
		}
		if t.Efficiency != nil {
			constant(s, team(vocab.SeriesTeamEfficiency), *t.Efficiency)
		}
	}
	if in.CostKnown {
		money(s, in.Ledger, in.WindowHours)
	}
	savings(s, in.Pools, in.CostKnown)
	if in.WindowHours > 0 {
		constant(s, vocab.SeriesAnalysisWindow, in.WindowHours*3600)
	}
	return s
}

// constant registers a gauge that always reads v: the Set is never
// updated, only replaced by the next analysis's.
func constant(s *metrics.Set, name string, v float64) {
	s.NewGauge(name, func() float64 { return v })
}
