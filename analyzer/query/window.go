package query

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
)

// DefaultStep is the subquery resolution when Window.Step is zero.
const DefaultStep = time.Minute

// Window is the period analysed: (Start, End], sampled every Step.
type Window struct {
	Start, End time.Time
	// Step is the subquery resolution. Zero means one minute; it should not
	// be shorter than the scrape interval, or steps repeat samples.
	Step time.Duration
}

func (w Window) withDefaults() (Window, error) {
	if w.Step == 0 {
		w.Step = DefaultStep
	}
	switch {
	case w.Step < time.Second || w.Step%time.Second != 0:
		return w, fmt.Errorf("step %s must be a whole number of seconds", w.Step)
	case !w.End.After(w.Start):
		return w, errors.New("window end must be after its start")
	case w.End.Sub(w.Start) < w.Step:
		return w, fmt.Errorf("window %s is shorter than the step %s", w.End.Sub(w.Start), w.Step)
	}
	return w, nil
}

// Duration is End - Start.
func (w Window) Duration() time.Duration { return w.End.Sub(w.Start) }

// rangeStr and stepStr are the window in PromQL syntax. Seconds avoid any
// rounding of odd windows into PromQL units.
func (w Window) rangeStr() string { return promDuration(w.Duration()) }
func (w Window) stepStr() string  { return promDuration(w.Step) }

func promDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return model.Duration(d).String()
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}

// ExpectedSteps is how many subquery steps fall in the window: PromQL
// evaluates a subquery at the multiples of its step (since the Unix epoch)
// in (End-range, End].
func (w Window) ExpectedSteps() int {
	step := w.Step.Milliseconds()
	floorDiv := func(a int64) int64 {
		q := a / step
		if a%step != 0 && a < 0 {
			q--
		}
		return q
	}
	return int(floorDiv(w.End.UnixMilli()) - floorDiv(w.Start.UnixMilli()))
}

func (w Window) hours(steps float64) float64 { return steps * w.Step.Hours() }
