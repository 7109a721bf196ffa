package dashboards

import (
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// flatPriceRule is a recording rule of the user's that prices every GPU
// alike, for the models gpulens serve did not price (docs/METRICS.md).
const flatPriceRule = "cluster:gpulens_gpu_hourly_price_usd:config"

// flatPrice is the price of a GPU-hour of a model serve has no price
// for: the user's recording rule, else the dashboard's variable.
var flatPrice = signals.FlatPrice(flatPriceRule, "$gpu_hourly_price")

// priced is expr (series with a model label) times its model's price per
// GPU-hour: serve's price series, which the analysis priced every GPU
// with, so that the dashboards' dollars are the report's; flatPrice for a
// model without one.
func priced(expr string) string {
	return signals.Priced(expr, vocab.SeriesPriceGPUHour, flatPrice)
}

// heldCostByTeam and unusedCostByTeam are the dollars of gpuHours: what
// each team's allocations, and the part of them it did not use, cost over
// the range at their GPUs' prices, as the ledger's allocation charge and
// its allocation less usage charge.
// A team any of whose allocations is of a model without a price at some
// step of the range has neither (knownOverRange).
func heldCostByTeam(s chart) string {
	return knownOverRange(gpuHours(s.heldPriced(), ""), byTeam, s.alloc())
}

func unusedCostByTeam(s chart) string {
	return knownOverRange(signals.MinutesToHours(signals.SumBy(byTeam, unusedOverRange(s))), byTeam, s.alloc())
}

// unpriced is the series of expr (with a model label) that priced leaves
// unknown: no serve price for their model, and no flat price set
// (signals.Unpriced).
func unpriced(expr string) string {
	return signals.Unpriced(expr, vocab.SeriesPriceGPUHour, flatPrice)
}

// knownOverRange is x, dollars over the range by labels (nil: the
// fleet's total), less every group in which a series of expr was
// unpriced at some step of the range (signals.KnownOnly): no value there
// on Prometheus and on VictoriaMetrics alike. Without the guard
// Prometheus reads such a sum NaN, but VictoriaMetrics' sum skips NaN and
// shows the priced part as if it were the whole.
func knownOverRange(x string, labels []string, expr string) string {
	return signals.KnownOnly(x, labels, signals.Subquery(signals.CountOverTime, signals.GroupBy(labels, unpriced(expr)), rangeVar, analyzerStep))
}

// avgOverRange is an instant figure averaged over the dashboard's range
// at the analyzer's resolution.
func avgOverRange(expr string) string {
	return signals.Subquery(signals.AvgOverTime, expr, rangeVar, analyzerStep)
}

// heldCapacity, unusedCapacity and unallocatedCapacity are the fleet
// overview's cost stats: heldPerMonth and unallocatedPerMonth averaged
// over the range, and unusedPerMonth, each nothing where a GPU it prices
// (an allocation's; any GPU that reports, for the unallocated part) was
// of a model without a price at some step of the range.
func heldCapacity(s chart) string {
	return knownOverRange(avgOverRange(heldPerMonth(s)), nil, s.alloc())
}

func unusedCapacity(s chart) string { return knownOverRange(unusedPerMonth(s), nil, s.alloc()) }

func unallocatedCapacity(s chart) string {
	return knownOverRange(avgOverRange(unallocatedPerMonth(s)), nil, s.gpu.GPU())
}

// unusedOverRange is each allocation's dollar-minutes held and not used
// over the range (signals.UnusedOver), at its GPU's price; a HAMi
// tenant's at HAMi's share, its use the ledger's window figure (its
// quantiles over the range against what it held), not per-step use.
func unusedOverRange(s chart) string {
	return signals.UnusedOver(s.heldPriced(), priced(s.used()), rangeVar, analyzerStep, s.windowUse())
}

// heldPerMonth, unusedPerMonth and unallocatedPerMonth are the fleet
// overview's monthly dollars: what allocations held, the part of it they
// did not use, and the capacity nobody held, at their models' prices for
// a 730-hour month, as serve's gpulens_fleet_monthly_cost_usd (used +
// idle, idle, unallocated).
func heldPerMonth(s chart) string { return signals.Monthly(signals.Sum(s.heldPriced())) }

// unusedPerMonth is over the whole range, not at each instant as the
// other two: use is netted over the range per allocation, as the ledger
// does (signals.UnusedOver); the range's steps make it a rate.
func unusedPerMonth(s chart) string {
	return signals.Monthly(signals.Div(signals.Paren(signals.OrZero(signals.Sum(unusedOverRange(s)))), signals.Steps(rangeVar, analyzerStep)))
}

// unallocatedPerMonth prices every GPU's part that no pod held, the free
// replicas and slices of shared GPUs too (signals.Unheld), not only the
// GPUs nobody held that the fleet's "Unallocated GPUs" counts; and every
// GPU that reports, a lost one too: it is paid for while nobody can hold
// it, as the ledger charges it.
func unallocatedPerMonth(s chart) string {
	return signals.Monthly(signals.Paren(signals.OrZero(signals.Sum(priced(signals.Unheld(s.gpu.GPU(), s.held()))))))
}
