package alerts

import (
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// serveGroup alerts on `gpulens serve` itself, from the series it
// exposes (docs/METRICS.md): an analysis that keeps failing leaves the
// last good one served and every finding's alert frozen, and alerts that
// Alertmanager does not accept are findings nobody hears of. The same for
// both schemas: serve's series are its own.
func serveGroup() Group {
	return Group{Name: "gpulens.serve", Rules: []Rule{
		alert(vocab.AlertServeStale, "warning", signals.Equal(signals.MaxBy([]string{"instance"}, vocab.SeriesServeStale), 1), "30m",
			"gpulens serve is serving an old analysis.",
			"{{ $labels.instance }}'s analyses have failed for 30 minutes: its findings, series and alerts are those of its last good analysis. Its log says why (the metrics source, most often)."),
		alert(vocab.AlertServeNotificationsFailing, "warning",
			signals.Above(signals.SumBy([]string{"instance", "alertmanager"},
				signals.Add(signals.Range(signals.Increase, vocab.SeriesServeNotificationsFailed, "15m"), signals.Range(signals.Increase, vocab.SeriesServeNotificationsDropped, "15m"))), 0), "15m",
			"gpulens serve cannot deliver alerts to an Alertmanager.",
			"{{ $labels.instance }} could not deliver {{ $value | humanize }} alerts to {{ $labels.alertmanager }} in the last 15 minutes, after every retry (or they were dropped from a full queue)."),
		alert(vocab.AlertServeStateNotWritten, "warning", signals.Above(signals.Range(signals.Increase, vocab.SeriesServeStateWriteFailures, "30m"), 0), "",
			"gpulens serve cannot write its state file.",
			"{{ $labels.instance }} could not write its --state.file: a restart would resolve its alerts and fire them again."),
	}}
}
