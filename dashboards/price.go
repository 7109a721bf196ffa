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
// the range at their GPUs' prices.
func heldCostByTeam(s chart) string { return gpuHours(priced(s.alloc()), "") }

func unusedCostByTeam(s chart) string {
	return "clamp_min(" + heldCostByTeam(s) + " - " + gpuHours(priced(s.used()), "") + ", 0)"
}

// The fleet's monthly dollars at each instant, for the fleet overview to
// average over the range: what allocations held, the part of it they did
// not use, and the GPUs nobody held, at their models' prices for a
// 730-hour month, as serve's gpulens_fleet_monthly_cost_usd.
func heldPerMonth(s chart) string { return signals.Sum(priced(s.alloc())) + " * " + hoursPerMonth }

func unusedPerMonth(s chart) string {
	return "clamp_min(" + signals.Sum(priced(s.alloc())) + " - (" + signals.OrZero(signals.Sum(priced(s.used()))) + "), 0) * " + hoursPerMonth
}

func unallocatedPerMonth(s chart) string {
	return "(" + signals.OrZero(signals.Sum(priced(unallocatedGPUs(s)))) + ") * " + hoursPerMonth
}
