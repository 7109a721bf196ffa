package dashboards

import (
	"github.com/gpulens/gpulens/vocab"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/gpulens/gpulens/signals"
)

// The series `gpulens serve` exposes for the findings of its last
// analysis; they are the same on both schemas.
const (
	findingMetric = vocab.SeriesFinding
	findingInfo   = vocab.SeriesFindingInfo
	savingsMetric = vocab.SeriesFindingMonthlySavings
	teamSeconds   = vocab.SeriesTeamGPUSeconds
	teamCost      = vocab.SeriesTeamMonthlyCost
	fleetCost     = vocab.SeriesFleetMonthlyCost
	fleetSavings  = vocab.SeriesFleetMonthlySavings
)

// The findings dashboard's matchers: serve's series carry the analysed
// cluster in vocab.DefaultClusterLabel, whatever the store's label.
var (
	inCluster     = signals.MatchRe(vocab.DefaultClusterLabel, "$cluster")
	inNamespace   = signals.MatchRe(signals.LabelNamespace, "$namespace")
	findingFilter = signals.Matchers(inCluster, inNamespace, signals.MatchRe("severity", "$severity"))
)

func severityVar() cog.Builder[dashboard.VariableModel] {
	return labelVar("severity", "Severity", signals.LabelValues(findingMetric, "severity"))
}

func findingsDashboard(s chart) spec {
	return spec{
		uid: "gpulens-findings-" + s.schema(), title: "gpulens / Findings", timeFrom: "now-7d",
		desc: "The findings of `gpulens serve`'s last analysis: what is open, what it would save, and what to do.",
		vars: []cog.Builder[dashboard.VariableModel]{
			labelVar("cluster", "Cluster", signals.LabelValues(findingMetric, vocab.DefaultClusterLabel)),
			labelVar("namespace", "Namespace", signals.LabelValues(signals.Select(findingMetric, inCluster), signals.LabelNamespace)),
			severityVar(),
		},
		rows: []row{
			{"Open", []panel{
				{kind: statPanel, title: "Open findings", unit: "short", w: 4, h: 4, desc: "Findings of the last analysis.",
					targets: []target{{expr: signals.OrZero(signals.Count(findingMetric + findingFilter)), instant: true}}},
				{kind: statPanel, title: "Critical findings", unit: "short", w: 4, h: 4, desc: "Findings of severity critical.",
					targets: []target{{expr: signals.OrZero(signals.Count(signals.Select(findingMetric, inCluster, inNamespace, signals.MatchEq("severity", "critical")))), instant: true}}},
				{kind: statPanel, title: "Saved when the freed nodes go", unit: "currencyUSD", w: 5, h: 4, decimals: ptr(0.0),
					desc:    "What acting on the week's advice takes off the bill per month: the price of the nodes the plan of the fleet after the advice frees, the report's and 'gpulens plan''s banked saving. Empty without a plan or a price.",
					targets: []target{{expr: signals.Sum(signals.Select(fleetSavings, inCluster, signals.MatchEq("kind", vocab.SavingBanked))), instant: true}}},
				{kind: statPanel, title: "Capacity freed for other work", unit: "currencyUSD", w: 5, h: 4, decimals: ptr(0.0),
					desc:    "What the GPUs that plan leaves free on the nodes that stay cost per month: capacity for other work, still on the bill until a node goes. The findings' own savings are GPU time, per finding in the table below, and are not added to either figure.",
					targets: []target{{expr: signals.Sum(signals.Select(fleetSavings, inCluster, signals.MatchEq("kind", vocab.SavingCapacityFreed))), instant: true}}},
				{kind: statPanel, title: "Monthly fleet cost", unit: "currencyUSD", w: 6, h: 4, decimals: ptr(0.0),
					desc:    "What the fleet's GPUs cost per month, held or not, at the analysis's prices: the report's cost of the fleet.",
					targets: []target{{expr: signals.Sum(signals.Select(fleetCost, inCluster)), instant: true}}},
			}},
			{"By kind", []panel{
				{kind: timeSeries, title: "Open findings by kind and severity", unit: "short", w: 12, h: 8, stacked: true,
					desc:    "How many findings each analysis left open.",
					targets: []target{{expr: signals.CountBy([]string{"kind", "severity"}, findingMetric+findingFilter), legend: "{{kind}} ({{severity}})"}}},
				{kind: barGauge, title: "Monthly savings by kind", unit: "currencyUSD", w: 12, h: 8,
					desc:    "Savings per month of the open findings, by kind.",
					targets: []target{{expr: signals.SumBy([]string{"kind"}, savingsMetric+findingFilter), legend: "{{kind}}", instant: true}}},
			}},
			{"Findings", []panel{
				// Every finding (A), merged with its savings (B) where serve
				// knows the cost: a finding without a price still shows.
				{kind: tablePanel, title: "Findings and recommendations", unit: "currencyUSD", w: 24, h: 10,
					desc: "Every open finding with its own summary (what was seen and what to do), where, and its monthly savings (empty where the cost is unknown).",
					targets: []target{
						{expr: findingMetric + findingFilter, instant: true, table: true},
						{expr: savingsMetric + findingFilter, instant: true, table: true},
						{expr: findingInfo + findingFilter, instant: true, table: true},
					},
					hidden:  []string{"Value #A", "Value #C", "__name__", "job", "instance"},
					renames: map[string]string{"kind": "Kind", "summary": "Summary", "gpu_uuid": "GPU", "Value #B": "Savings / month"}},
			}},
			reclaimRow(),
			{"Teams", []panel{
				{kind: timeSeries, title: "Team GPU-hours by state", unit: "short", w: 12, h: 8, stacked: true,
					desc:    "GPU-hours of each team in the analyzed window: used and idle, stacked to the hours allocated.",
					targets: []target{{expr: signals.SecondsToHours(signals.SumBy([]string{"team", "state"}, signals.Select(teamSeconds, inCluster, signals.MatchAnyOf("state", "used", "idle")))), legend: "{{team}} {{state}}"}}},
				{kind: barGauge, title: "Team monthly cost", unit: "currencyUSD", w: 12, h: 8,
					desc:    "What each team's held GPUs cost per month.",
					targets: []target{{expr: signals.SumBy([]string{"team"}, signals.Select(teamCost, inCluster)), legend: "{{team}}", instant: true}}},
			}},
		},
	}
}
