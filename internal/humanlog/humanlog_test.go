package humanlog

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestHandler: a warning is one line a person reads: the level, the
// message, the other attributes, the error last; the source dropped when
// the error names it; a label's control characters shown, not run. At
// 36bc8ff a wrong --prometheus-url printed five logfmt records
// (time=... level=WARN msg=...) before its error.
func TestHandler(t *testing.T) {
	for _, c := range []struct {
		name string
		log  func(*slog.Logger)
		want string
	}{
		{"retry", func(l *slog.Logger) {
			l.Warn("retrying PromQL API call", "source", "prometheus at http://p:9090",
				"err", errors.New("prometheus at http://p:9090: connection refused"), "attempt", 1, "wait", 339663419*time.Nanosecond)
		}, "warning: retrying PromQL API call (attempt 1, wait 340ms): prometheus at http://p:9090: connection refused\n"},
		{"source kept when the error lacks it", func(l *slog.Logger) {
			l.With("source", "data dir ./d").Warn("the window starts later", "first_sample", time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC))
		}, "warning: the window starts later (source data dir ./d, first_sample 2026-01-05T08:00:00Z)\n"},
		{"below the level", func(l *slog.Logger) { l.Info("chatty") }, ""},
		{"hostile label", func(l *slog.Logger) { l.Warn("no pod", "pod", "a\x1b]52;c;ZWNobw==\x07\rforged") },
			`warning: no pod (pod a\x1b]52;c;ZWNobw==\a\rforged)` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			c.log(slog.New(New(&buf, slog.LevelWarn)))
			if buf.String() != c.want {
				t.Errorf("got  %q\nwant %q", buf.String(), c.want)
			}
		})
	}
}
