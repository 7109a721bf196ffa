package series

import (
	"github.com/gpulens/gpulens/vocab"
)

// Family is one metric family gpulens serve exposes: the metrics library
// writes samples only, and promtool (like any scraper showing metadata)
// wants HELP and TYPE, which Write adds from this table.
type Family struct {
	Name, Type, Help string
}

// Families lists every family serve exposes; docs/METRICS.md documents
// the same ones, and a test keeps the two in step.
var Families = []Family{
	{vocab.SeriesFinding, "gauge", "A finding of the last analysis; always 1. Labels are its identity."},
	{vocab.SeriesFindingInfo, "gauge", "A finding's summary, in the summary label; always 1. The other labels are gpulens_finding's."},
	{vocab.SeriesFindingMonthlySavings, "gauge", "Monthly savings of a finding's recommendation in USD (negative when it costs more); absent without a price."},
	{vocab.SeriesFindingMonthlyCost, "gauge", "Monthly cost of a finding's subject in USD; absent without a price."},
	{vocab.SeriesTeamGPUSeconds, "gauge", "GPU-seconds of a team over the analysis window (GPU-hours × 3600), by state: allocated, used or idle."},
	{vocab.SeriesTeamMonthlyCost, "gauge", "A team's GPU allocations over the window, priced for a 730-hour month, in USD."},
	{vocab.SeriesTeamEfficiency, "gauge", "Used over measured allocated GPU-hours of a team in the window."},
	{vocab.SeriesFleetMonthlyCost, "gauge", "The fleet's GPUs over the window priced for a 730-hour month, in USD, by state: used, idle (held and not used) or unallocated; the three add up to the fleet's cost. Absent where a GPU has no price."},
	{vocab.SeriesFleetMonthlySavings, "gauge", "The report's two savings a month in USD, from the consolidation plan of the fleet after the advice, by kind: banked (the freed nodes' price, off the bill when they go) or capacity_freed (the GPUs freed on the nodes that stay, still on the bill). Absent without a plan or a price."},
	{vocab.SeriesFleetCapacityFreedGPUs, "gauge", "GPUs the consolidation plan of the fleet after the advice leaves free on the nodes that stay: capacity for other work. Absent without a plan."},
	{vocab.SeriesPriceGPUHour, "gauge", "Price of one GPU-hour of a model in USD, as the analysis priced it (the price table, less discounts); the dashboards price GPU-hours with it."},
	{vocab.SeriesAnalysisWindow, "gauge", "Length of the window the last analysis covered."},
	{vocab.SeriesServeLastSuccess, "gauge", "Unix time the last successful analysis finished."},
	{vocab.SeriesServeAnalysisDuration, "gauge", "How long the last analysis took, successful or not."},
	{vocab.SeriesServeAnalyses, "counter", "Analyses run, by result: success or failure."},
	{vocab.SeriesServeQueries, "counter", "PromQL queries issued by successful analyses."},
	{vocab.SeriesServeStale, "gauge", "1 while the last analysis failed, or found every node's data stopped, and the series and API show the last good one."},
	{vocab.SeriesServeAlerts, "gauge", "Alerts being sent to Alertmanager, by state: active or resolved (re-sent for 15 minutes)."},
	{vocab.SeriesServeNotificationsSent, "counter", "Alerts an Alertmanager accepted."},
	{vocab.SeriesServeNotificationsFailed, "counter", "Alerts in batches an Alertmanager did not accept after every retry."},
	{vocab.SeriesServeNotificationsDropped, "counter", "Alerts dropped, oldest first, because an Alertmanager's queue was full."},
	{vocab.SeriesServeNotificationQueue, "gauge", "Alerts waiting to be sent to an Alertmanager."},
	{vocab.SeriesServeStateWriteFailures, "counter", "Writes of the state file (--state.file) that failed."},
}
