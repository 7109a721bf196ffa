package vocab

// The series gpulens serve exposes: the findings and team figures of its
// last analysis (analyzer/series), and the service's own health
// (analyzer/serve, analyzer/notify). analyzer/series.Families gives each
// its type and help; docs/METRICS.md documents them; the rule files and
// the findings dashboard read them.
const (
	SeriesFinding               = "gpulens_finding"
	SeriesFindingInfo           = "gpulens_finding_info"
	SeriesFindingMonthlySavings = "gpulens_finding_monthly_savings_usd"
	SeriesFindingMonthlyCost    = "gpulens_finding_monthly_cost_usd"
	SeriesTeamGPUSeconds        = "gpulens_team_gpu_seconds"
	SeriesTeamMonthlyCost       = "gpulens_team_monthly_cost_usd"
	SeriesTeamEfficiency        = "gpulens_team_efficiency_ratio"
	SeriesAnalysisWindow        = "gpulens_analysis_window_seconds"
	SeriesFleetMonthlyCost      = "gpulens_fleet_monthly_cost_usd"
	// SeriesFleetMonthlySavings and SeriesFleetCapacityFreedGPUs are the
	// report's two savings (report.Savings), by cluster: the consolidation
	// plan's of the fleet after the advice.
	SeriesFleetMonthlySavings    = "gpulens_fleet_monthly_savings_usd"
	SeriesFleetCapacityFreedGPUs = "gpulens_fleet_capacity_freed_gpus"
	// SavingBanked and SavingCapacityFreed are the values of
	// SeriesFleetMonthlySavings' kind label: the report's two savings, what
	// the nodes the plan frees take off the bill, and what the GPUs it
	// leaves free on the nodes that stay cost. serve writes them
	// (analyzer/series) and the findings dashboard selects by them.
	SavingBanked        = "banked"
	SavingCapacityFreed = "capacity_freed"
	// SeriesPriceGPUHour is each GPU model's price per GPU-hour, which
	// the dashboards price GPU-hours with.
	SeriesPriceGPUHour = "gpulens_price_gpu_hour_usd"

	SeriesServeLastSuccess          = "gpulens_serve_last_success_timestamp_seconds"
	SeriesServeAnalysisDuration     = "gpulens_serve_analysis_duration_seconds"
	SeriesServeAnalyses             = "gpulens_serve_analyses_total"
	SeriesServeQueries              = "gpulens_serve_queries_total"
	SeriesServeStale                = "gpulens_serve_stale"
	SeriesServeAlerts               = "gpulens_serve_alerts"
	SeriesServeNotificationsSent    = "gpulens_serve_notifications_sent_total"
	SeriesServeNotificationsFailed  = "gpulens_serve_notifications_failed_total"
	SeriesServeNotificationsDropped = "gpulens_serve_notifications_dropped_total"
	SeriesServeNotificationQueue    = "gpulens_serve_notification_queue_length"
	SeriesServeStateWriteFailures   = "gpulens_serve_state_write_failures_total"
)

// The series gpulens reclaim exposes (analyzer/reclaim.Families gives each
// its type and help; docs/METRICS.md documents them); the findings
// dashboard's Reclaim row reads them.
const (
	SeriesReclaimActions   = "gpulens_reclaim_actions_total"
	SeriesReclaimPending   = "gpulens_reclaim_pending"
	SeriesReclaimReclaimed = "gpulens_reclaim_workloads_reclaimed"
	SeriesReclaimGPUHours  = "gpulens_reclaim_gpu_hours_total"
	SeriesReclaimUSD       = "gpulens_reclaim_usd_total"
	SeriesReclaimCycles    = "gpulens_reclaim_cycles_total"
	SeriesReclaimDecisions = "gpulens_reclaim_decisions"
)

// DefaultClusterLabel is the label a store shared by several clusters
// names each series' cluster by: the external label that Thanos, Mimir and
// the Prometheus Operator's examples add (prometheus.prometheusSpec.
// externalLabels, a sidecar's --prometheus external labels). It is the
// analyzer's --cluster-label default, the dashboards' cluster variable's,
// and the label serve's series and alerts carry the analysed cluster in.
const DefaultClusterLabel = "cluster"

// HoursPerMonth is the cloud billing convention, 8,760 h / 12: the month
// every monthly cost and saving is priced for, in the analysis, the plan,
// serve's series and the dashboards.
const HoursPerMonth = 730
