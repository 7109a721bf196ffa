package dashboards

import (
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// reclaimFilter is the cluster variable only: the reclaimer's series name
// workloads by namespace too, but a namespace that reclaim does not reach
// would read as nothing reclaimed rather than not opted in.
var reclaimFilter = signals.Matchers(inCluster)

// reclaimRow is what gpulens reclaim did and has pending (docs/RECLAIM.md):
// empty where no reclaimer runs, which its panels say.
func reclaimRow() row {
	// The counters' totals, not their increase over the range: a stat
	// is PromQL's figure at the range's end, and the dashboards' rates
	// are over $__rate_interval only. They count from the reclaimer's
	// start, as its series do.
	released := func(name string) string { return signals.OrZero(signals.Sum(name + reclaimFilter)) }
	return row{"Reclaim", []panel{
		{kind: statPanel, title: "Pending reclaims", unit: "short", w: 6, h: 4,
			desc:    "Reclaims announced (an Event on the workload, an alert GPULensReclaimPending) and neither done nor cancelled yet. 0 where gpulens reclaim does not run.",
			targets: []target{{expr: signals.OrZero(signals.Sum(vocab.SeriesReclaimPending + reclaimFilter)), instant: true}}},
		{kind: statPanel, title: "Workloads reclaimed", unit: "short", w: 6, h: 4,
			desc:    "Workloads gpulens reclaim scaled to zero or suspended, and not running again: each can be restored with gpulens reclaim undo.",
			targets: []target{{expr: signals.OrZero(signals.Sum(vocab.SeriesReclaimReclaimed + reclaimFilter)), instant: true}}},
		{kind: statPanel, title: "GPU-hours released", unit: "short", w: 6, h: 4, decimals: ptr(0.0),
			desc:    "GPU-hours that reclaimed workloads did not hold, since the reclaimer started.",
			targets: []target{{expr: released(vocab.SeriesReclaimGPUHours), instant: true}}},
		{kind: statPanel, title: "Released, in dollars", unit: "currencyUSD", w: 6, h: 4, decimals: ptr(0.0),
			desc:    "What those GPU-hours would have cost at the prices of the analyses that reclaimed them, since the reclaimer started.",
			targets: []target{{expr: released(vocab.SeriesReclaimUSD), instant: true}}},
		{kind: timeSeries, title: "Reclaim actions", unit: "short", w: 24, h: 8,
			desc: "The reclaimer's actions by action and result (dry-run where it only announces): announce, cancel, reclaim, mark-resumed.",
			targets: []target{{expr: signals.SumBy([]string{"action", "result"},
				signals.Range(signals.Increase, vocab.SeriesReclaimActions+reclaimFilter, "$__rate_interval")), legend: "{{action}} {{result}}"}}},
	}}
}
