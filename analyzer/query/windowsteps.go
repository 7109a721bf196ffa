package query

import (
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"
)

// The window's steps as the query set writes and counts them: PromQL
// syntax and step arithmetic the model (fleet.Window) has no use for.

// rangeStr and stepStr are the window in PromQL syntax. Seconds avoid any
// rounding of odd windows into PromQL units.
func rangeStr(w fleet.Window) string { return promDuration(w.Duration()) }
func stepStr(w fleet.Window) string  { return promDuration(w.Step) }

var promDuration = signals.Duration

// hours is steps of w in hours.
func hours(w fleet.Window, steps float64) float64 { return steps * w.Step.Hours() }

// firstStep is the time of the window's first step in Unix milliseconds
// (fleet.Window.Grid): the steps are firstStep + i × Step for
// i < ExpectedSteps, the times at which the window's subqueries evaluate
// their expression.
func firstStep(w fleet.Window) int64 {
	first, _ := w.Grid()
	return first.UnixMilli()
}

// sinceLastStep is the time from t (Unix milliseconds, a step of the
// window) to the window's last step.
func sinceLastStep(w fleet.Window, t int64) time.Duration {
	last := firstStep(w) + int64(w.ExpectedSteps()-1)*w.Step.Milliseconds()
	return time.Duration(last-t) * time.Millisecond
}

// floorDiv is a/b rounded towards minus infinity, for times before 1970.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// allocationGPU is the physical GPU an allocation is on, as its
// workload's GPUs list it (without the cluster, which the workload has).
func allocationGPU(x fleet.Allocation) fleet.GPUKey { return fleet.GPUKey{Node: x.Node, UUID: x.UUID} }
