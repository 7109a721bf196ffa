package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/gpulens/gpulens/signals"
)

// byTeam groups by the team variable's label.
var byTeam = []string{"$team_label"}

// rangeVar and analyzerStep are a subquery over the dashboard's range at
// the analyzer's one-minute resolution.
const (
	rangeVar     = "$__range"
	analyzerStep = "1m"
)

// gpuHours integrates a per-container share over the range at the
// analyzer's one-minute resolution: an instant query, so Grafana never
// sums points over time (dcgm-exporter #146).
func gpuHours(expr, offset string) string {
	return signals.MinutesToHours(signals.SubqueryOffset(signals.SumOverTime, signals.SumBy(byTeam, expr), rangeVar, analyzerStep, offset))
}

func teamEfficiency(s chart) spec {
	s = s.withoutTenantVars(true).withTeam()
	// HAMi tenants at HAMi's share (chart.held), as the cost columns and
	// the ledger charge them.
	alloc, used := gpuHours(s.held(), ""), gpuHours(s.heldUsed(), "")
	allocPrev, usedPrev := gpuHours(s.held(), "1w"), gpuHours(s.heldUsed(), "1w")
	return spec{
		uid: "gpulens-team-" + s.schema(), title: "gpulens / Team efficiency", timeFrom: "now-7d",
		desc: "GPU-hours each team held and used over the range, its efficiency and cost, and the change against the week before.",
		vars: []cog.Builder[dashboard.VariableModel]{clusterVar(s), nodeVar(s), namespaceVar(s), teamVar(), priceVar()},
		rows: []row{
			{"Over the range", []panel{
				{kind: tablePanel, title: "GPU-hours by team", unit: "short", w: 24, h: 9,
					desc: "Allocated and used GPU-hours over the dashboard's range, efficiency (used / allocated), and cost at each GPU model's price (gpulens serve's, else the price recording rule or $gpu_hourly_price). A team's cost and unused dollars are no value while one of its pods in the range held a GPU of a model none of them prices: an unknown price is never $0, nor a sum of the priced part.",
					targets: []target{
						{expr: alloc, instant: true, table: true},
						{expr: used, instant: true, table: true},
						{expr: signals.Div(used, alloc), instant: true, table: true},
						{expr: heldCostByTeam(s), instant: true, table: true},
						{expr: unusedCostByTeam(s), instant: true, table: true},
					},
					renames: map[string]string{"Value #A": "Allocated GPU-hours", "Value #B": "Used GPU-hours",
						"Value #C": "Efficiency", "Value #D": "Cost ($)", "Value #E": "Unused ($)"}},
			}},
			{"Over time", []panel{
				ts("Allocated vs used GPUs", "short", "GPUs held (shares summed) and used (share × measured use) by each team.", 12,
					target{expr: signals.SumBy(byTeam, s.held()), legend: "{{$team_label}} allocated"},
					target{expr: signals.SumBy(byTeam, s.heldUsed()), legend: "{{$team_label}} used"}),
				ratio("Efficiency", "Used over allocated GPU capacity, per team.", 12,
					target{expr: signals.Div(signals.SumBy(byTeam, s.heldUsed()), signals.SumBy(byTeam, s.held())), legend: "{{$team_label}}"}),
			}},
			{"Week over week", []panel{
				{kind: barGauge, title: "Allocated GPU-hours, change", unit: "short", w: 8, h: 8,
					desc:    "Allocated GPU-hours over the range minus the same range a week earlier.",
					targets: []target{{expr: signals.Sub(alloc, allocPrev), legend: "{{$team_label}}", instant: true}}},
				{kind: barGauge, title: "Used GPU-hours, change", unit: "short", w: 8, h: 8,
					desc:    "Used GPU-hours over the range minus the same range a week earlier.",
					targets: []target{{expr: signals.Sub(used, usedPrev), legend: "{{$team_label}}", instant: true}}},
				{kind: barGauge, title: "Efficiency, change", unit: "percentunit", w: 8, h: 8,
					desc:    "Efficiency over the range minus the efficiency of the same range a week earlier.",
					targets: []target{{expr: signals.Sub(efficiency(s, ""), efficiency(s, "1w")), legend: "{{$team_label}}", instant: true}}},
			}},
			hamiRow(s),
		},
	}
}

// efficiency is each team's used over allocated GPU-hours over the range,
// moved back by offset, HAMi tenants at HAMi's share: both sides packed
// in one vector (signals.RatioOfParts), so that HAMi's forms
// (chart.heldPacked) are written once, not once a side; four sides
// outgrew VictoriaMetrics' 16 KiB a query. A team whose allocations
// have no utilisation reading used 0.
func efficiency(s chart, offset string) string {
	by := append(append([]string{}, byTeam...), signals.LabelPart)
	packed := signals.SubqueryOffset(signals.SumOverTime, signals.SumBy(by, s.heldPacked()), rangeVar, analyzerStep, offset)
	return signals.RatioOfParts(byTeam, "used", "held", packed)
}
