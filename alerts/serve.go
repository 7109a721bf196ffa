package alerts

import "github.com/gpulens/gpulens/vocab"

// serveGroup alerts on `gpulens serve` itself, from the series it
// exposes (docs/METRICS.md): an analysis that keeps failing leaves the
// last good one served and every finding's alert frozen, and alerts that
// Alertmanager does not accept are findings nobody hears of. The same for
// both schemas: serve's series are its own.
func serveGroup() Group {
	return Group{Name: "gpulens.serve", Rules: []Rule{
		alert(vocab.AlertServeStale, "warning", `max by (instance) (gpulens_serve_stale) == 1`, "30m",
			"gpulens serve is serving an old analysis.",
			"{{ $labels.instance }}'s analyses have failed for 30 minutes: its findings, series and alerts are those of its last good analysis. Its log says why (the metrics source, most often)."),
		alert(vocab.AlertServeNotificationsFailing, "warning",
			`sum by (instance, alertmanager) (increase(gpulens_serve_notifications_failed_total[15m]) + increase(gpulens_serve_notifications_dropped_total[15m])) > 0`, "15m",
			"gpulens serve cannot deliver alerts to an Alertmanager.",
			"{{ $labels.instance }} could not deliver {{ $value | humanize }} alerts to {{ $labels.alertmanager }} in the last 15 minutes, after every retry (or they were dropped from a full queue)."),
		alert(vocab.AlertServeStateNotWritten, "warning", `increase(gpulens_serve_state_write_failures_total[30m]) > 0`, "",
			"gpulens serve cannot write its state file.",
			"{{ $labels.instance }} could not write its --state.file: a restart would resolve its alerts and fire them again."),
	}}
}
