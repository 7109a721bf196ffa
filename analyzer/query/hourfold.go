package query

import (
	"math"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/scan"
)

// hourFold folds, for the hourly ledger (analyzer/ledger), the time each
// GPU reported and each allocation held and used in each clock hour of
// the window (fleet.Window.HourGrid) out of the gpu, allocation and
// utilization passes, which read those values anyway: no read of its
// own. What it keeps is per hour, not per step: a GPU's hours
// (fleet.GPU.ReportedByHour) and an allocation's (fleet.AllocationHours),
// a view of the allocation's share runs (shareFold), which it reads again
// against its utilization. The passes add steps (exact in a float64); done turns
// them into hours with one product each, so that a full hour of one-minute
// steps is 1 h, not sixty sixtieths' rounding.
type hourFold struct {
	hours  int
	stepH  float64
	hourOf []int32
}

// newHourFold is a fold over w's hours; nil for none.
func newHourFold(w fleet.Window, on bool) *hourFold {
	if !on {
		return nil
	}
	_, n := w.HourGrid()
	_, steps := w.Grid()
	f := &hourFold{hours: n, stepH: w.Step.Hours(), hourOf: make([]int32, steps)}
	for i := range f.hourOf {
		f.hourOf[i] = int32(w.StepHour(i))
	}
	return f
}

// hour is step i's hour; -1 past the window's steps.
func (f *hourFold) hour(i int) int {
	if i >= len(f.hourOf) {
		return -1
	}
	return int(f.hourOf[i])
}

// gpu adds the steps v has a value at to g's hours (the gpu pass, one
// call per model the GPU was reported as, as GPU.Steps counts them).
func (f *hourFold) gpu(g *fleet.GPU, v []float64) {
	if f == nil {
		return
	}
	for i, x := range v {
		h := f.hour(i)
		if h < 0 || scan.IsAbsent(x) {
			continue
		}
		if g.ReportedByHour == nil {
			g.ReportedByHour = make([]float64, f.hours)
		}
		g.ReportedByHour[h]++
	}
}

// keep starts an allocation's hours from its share runs (shareFold.keep),
// which lie within the window's steps.
func (f *hourFold) keep(x *fleet.Allocation, runs []shareRun) {
	if f == nil {
		return
	}
	last := runs[len(runs)-1]
	first := f.hour(runs[0].from)
	n := f.hour(last.from+last.n-1) - first + 1
	h := &fleet.AllocationHours{First: first, Held: make([]float64, n), GPUHours: make([]float64, n), Measured: make([]float64, n), Used: make([]float64, n)}
	for _, r := range runs {
		for i := r.from; i < r.from+r.n; i++ {
			j := f.hour(i) - first
			h.Held[j]++
			h.GPUHours[j] += r.v
		}
	}
	x.Hours = h
}

// util adds an allocation's utilization at each step it was held at (the
// utilization pass's max by its key, read against its share runs) to its
// hours.
func (f *hourFold) util(x *fleet.Allocation, runs []shareRun, util []float64) {
	if f == nil {
		return
	}
	h := x.Hours
	if h == nil {
		return
	}
	for _, r := range runs {
		for i := r.from; i < r.from+r.n && i < len(util); i++ {
			u := util[i]
			if scan.IsAbsent(u) || math.IsNaN(u) {
				continue
			}
			j := f.hour(i) - h.First
			h.Measured[j]++
			h.Used[j] += max(0, u)
		}
	}
}

// done turns the steps the passes added into hours.
func (f *hourFold) done(gpus map[fleet.GPUKey]*fleet.GPU, allocs map[fleet.AllocationKey]*fleet.Allocation) {
	if f == nil {
		return
	}
	for _, g := range gpus {
		for i := range g.ReportedByHour {
			g.ReportedByHour[i] *= f.stepH
		}
	}
	for _, x := range allocs {
		if h := x.Hours; h != nil {
			for i := range h.Held {
				h.Held[i] *= f.stepH
				h.GPUHours[i] *= f.stepH
				h.Measured[i] *= f.stepH
				h.Used[i] *= f.stepH
			}
		}
	}
}
