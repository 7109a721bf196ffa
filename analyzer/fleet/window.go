package fleet

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpulens/gpulens/internal/promdur"
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

// WithDefaults fills the step in and checks the window: a whole number of
// seconds per step, and at least one step long.
func (w Window) WithDefaults() (Window, error) {
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

// SubqueryRange is the range of the window's subqueries. PromQL
// evaluates a subquery at the multiples of its step; Prometheus 3 (and the
// embedded engine) keeps those in (End-range, End], but Prometheus 2 (2.42
// in Debian, the 2.53 LTS in many clusters) keeps them in [End-range, End],
// so with range = End-Start it also counts the step at Start, which is not
// in the window: on a Prometheus 2 server every series present at Start
// had one step too many and a coverage above 1 (seen by e2e against
// Debian's Prometheus 2.42). The range here ends 1ms after g0, the last
// step at or before Start: no step lies in (g0, g0+1ms] because steps are
// whole seconds, so both semantics select exactly the steps in
// (Start, End], the ones ExpectedSteps counts.
func (w Window) SubqueryRange() string {
	g0 := floorDiv(w.Start.UnixMilli(), w.Step.Milliseconds()) * w.Step.Milliseconds()
	return promdur.Format(time.Duration(w.End.UnixMilli()-g0-1) * time.Millisecond)
}

// ExpectedSteps is how many subquery steps fall in the window: PromQL
// evaluates a subquery at the multiples of its step (since the Unix epoch)
// in (End-range, End].
func (w Window) ExpectedSteps() int {
	step := w.Step.Milliseconds()
	return int(floorDiv(w.End.UnixMilli(), step) - floorDiv(w.Start.UnixMilli(), step))
}

// floorDiv is a/b rounded towards minus infinity, for times before 1970.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// Grid is the window's steps: the first, and how many there are. Every
// reader of the window (the analysis, the plan, the timeline) reads at
// these instants, so their figures agree.
func (w Window) Grid() (first time.Time, steps int) {
	return time.UnixMilli(w.firstStep()).UTC(), w.ExpectedSteps()
}

// firstStep is the time of the window's first step in Unix milliseconds:
// the first multiple of the step after Start. The steps are then
// firstStep + i × Step for i < ExpectedSteps, the times at which the
// window's subqueries evaluate their expression.
func (w Window) firstStep() int64 {
	step := w.Step.Milliseconds()
	return (floorDiv(w.Start.UnixMilli(), step) + 1) * step
}
