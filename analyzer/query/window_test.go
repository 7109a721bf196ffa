package query

import (
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// TestSubqueryRangeSelectsTheWindowOnEveryEngine checks the arithmetic that
// makes subqueries select exactly the steps in (Start, End] both where the
// subquery range is left-open (Prometheus 3, the embedded engine) and where
// it is closed (Prometheus 2); e2e runs it against a real Prometheus 2.42.
func TestSubqueryRangeSelectsTheWindowOnEveryEngine(t *testing.T) {
	for _, w := range []fleet.Window{
		{Start: t0, End: minute(360), Step: time.Minute},
		{Start: t0.Add(30 * time.Second), End: minute(240).Add(30 * time.Second), Step: time.Minute},
		{Start: t0.Add(999 * time.Millisecond), End: minute(240), Step: time.Minute},
		{Start: t0.Add(-time.Millisecond), End: minute(240), Step: time.Minute},
		{Start: t0, End: minute(240), Step: 5 * time.Minute},
		{Start: time.Unix(-90, 0), End: time.Unix(3600, 0), Step: time.Minute},
	} {
		d, err := model.ParseDuration(w.SubqueryRange())
		if err != nil {
			t.Fatalf("%s: %v", w.SubqueryRange(), err)
		}
		from := w.End.UnixMilli() - time.Duration(d).Milliseconds()
		step := w.Step.Milliseconds()
		var open, closed int
		for ts := floorDiv(from, step) * step; ts <= w.End.UnixMilli(); ts += step {
			if ts > from {
				open++
			}
			if ts >= from {
				closed++
			}
		}
		if want := w.ExpectedSteps(); open != want || closed != want {
			t.Errorf("window (%s, %s] step %s, range %s: %d steps left-open, %d closed, want %d",
				w.Start.Format(time.RFC3339Nano), w.End.Format(time.RFC3339Nano), w.Step, w.SubqueryRange(), open, closed, want)
		}
	}
}
