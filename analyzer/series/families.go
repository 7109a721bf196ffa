package series

// Family is one metric family gpulens serve exposes: the metrics library
// writes samples only, and promtool (like any scraper showing metadata)
// wants HELP and TYPE, which Write adds from this table.
type Family struct {
	Name, Type, Help string
}

// Families lists every family serve exposes; docs/METRICS.md documents
// the same ones, and a test keeps the two in step.
var Families = []Family{
	{"gpulens_finding", "gauge", "A finding of the last analysis; always 1. Labels are its identity."},
	{"gpulens_finding_info", "gauge", "A finding's summary, in the summary label; always 1. The other labels are gpulens_finding's."},
	{"gpulens_finding_monthly_savings_usd", "gauge", "Monthly savings of a finding's recommendation in USD (negative when it costs more); absent without a price."},
	{"gpulens_finding_monthly_cost_usd", "gauge", "Monthly cost of a finding's subject in USD; absent without a price."},
	{"gpulens_team_gpu_seconds", "gauge", "GPU-seconds of a team over the analysis window (GPU-hours × 3600), by state: allocated, used or idle."},
	{"gpulens_team_monthly_cost_usd", "gauge", "A team's GPU allocations over the window, priced for a 730-hour month, in USD."},
	{"gpulens_team_efficiency_ratio", "gauge", "Used over measured allocated GPU-hours of a team in the window."},
	{"gpulens_analysis_window_seconds", "gauge", "Length of the window the last analysis covered."},
	{"gpulens_serve_last_success_timestamp_seconds", "gauge", "Unix time the last successful analysis finished."},
	{"gpulens_serve_analysis_duration_seconds", "gauge", "How long the last analysis took, successful or not."},
	{"gpulens_serve_analyses_total", "counter", "Analyses run, by result: success or failure."},
	{"gpulens_serve_queries_total", "counter", "PromQL queries issued by successful analyses."},
	{"gpulens_serve_stale", "gauge", "1 while the last analysis failed and the series and API show the last good one."},
	{"gpulens_serve_alerts", "gauge", "Alerts being sent to Alertmanager, by state: active or resolved (re-sent for 15 minutes)."},
	{"gpulens_serve_notifications_sent_total", "counter", "Alerts an Alertmanager accepted."},
	{"gpulens_serve_notifications_failed_total", "counter", "Alerts in batches an Alertmanager did not accept after every retry."},
	{"gpulens_serve_notifications_dropped_total", "counter", "Alerts dropped, oldest first, because an Alertmanager's queue was full."},
	{"gpulens_serve_notification_queue_length", "gauge", "Alerts waiting to be sent to an Alertmanager."},
	{"gpulens_serve_state_write_failures_total", "counter", "Writes of the state file (--state.file) that failed."},
}
