package query

import (
	"math"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/scan"
)

// shareFold is the one fold of each allocation's shares over the window's
// steps that the passes' by-products are views of: the timeline's points
// (timelineFold), the plan's lanes (laneFold) and the ledger's hours
// (hourFold). The allocation pass gives an allocation's share at each step
// (its max by the allocation's key); the runs of equal shares are built
// from it once, here, and kept until the utilization pass, which the
// timeline and the hours read against them. Until issue 55 each view built
// its own runs from the same answer and two kept them, so a report paid
// three walks of every allocation's steps and two maps of runs.
type shareFold struct {
	steps int
	// runs are each allocation's, from its allocation pass until its
	// utilization pass; only kept where a view reads them there.
	runs     map[fleet.AllocationKey][]shareRun
	timeline *timelineFold
	lanes    *laneFold
	hours    *hourFold
}

// shareRun is a run of steps at which an allocation's share was v.
type shareRun struct {
	from, n int
	v       float64
}

// newShareFold folds what sh asks of the passes (Sharding.TimelinePoints,
// Sharding.Lanes) over w; nil for nothing.
func newShareFold(w fleet.Window, sh Sharding) *shareFold {
	f := &shareFold{steps: w.ExpectedSteps(), runs: map[fleet.AllocationKey][]shareRun{},
		timeline: newTimelineFold(w, sh.TimelinePoints), lanes: newLaneFold(w, sh.Lanes), hours: newHourFold(w, sh.Lanes)}
	if f.timeline == nil && f.lanes == nil && f.hours == nil {
		return nil
	}
	return f
}

// shareRuns are the runs of equal shares at the steps v has a value at,
// in step order: a share rarely changes, so an allocation is a few runs,
// not a value per step.
func shareRuns(v []float64) []shareRun {
	var runs []shareRun
	for i, x := range v {
		if scan.IsAbsent(x) || math.IsNaN(x) {
			continue
		}
		if n := len(runs); n > 0 && runs[n-1].v == x && runs[n-1].from+runs[n-1].n == i {
			runs[n-1].n++
			continue
		}
		runs = append(runs, shareRun{from: i, n: 1, v: x})
	}
	return runs
}

// keep builds an allocation's runs from its shares at each step (the
// allocation pass's max by its key), past the window's steps none.
func (f *shareFold) keep(x *fleet.Allocation, v []float64) {
	if f == nil {
		return
	}
	runs := shareRuns(v[:min(len(v), f.steps)])
	if len(runs) == 0 {
		return
	}
	f.lanes.keep(x.AllocationKey, runs)
	f.hours.keep(x, runs)
	if f.timeline != nil || f.hours != nil {
		f.runs[x.AllocationKey] = runs
	}
}

// util reads an allocation's utilization at each step (the utilization
// pass's max by its key) against its runs.
func (f *shareFold) util(x *fleet.Allocation, util []float64) {
	if f == nil {
		return
	}
	runs := f.runs[x.AllocationKey]
	delete(f.runs, x.AllocationKey)
	f.timeline.fold(x.AllocationKey, runs, util)
	f.lanes.util(x.AllocationKey, util)
	f.hours.util(x, runs, util)
}

// mem keeps an allocation's memory (the memory pass's max by its key)
// where it was held, for the lanes.
func (f *shareFold) mem(k fleet.AllocationKey, v []float64) {
	if f != nil {
		f.lanes.mem(k, v)
	}
}

// device shares a GPU's device memory out over its tenants' lanes
// (laneFold.device).
func (f *shareFold) device(g fleet.GPUKey, d []float64, mig func(fleet.AllocationKey) bool) {
	if f != nil {
		f.lanes.device(g, d, mig)
	}
}

// gpu adds the steps a GPU reported at to its hours (hourFold.gpu).
func (f *shareFold) gpu(g *fleet.GPU, v []float64) {
	if f != nil {
		f.hours.gpu(g, v)
	}
}

// finish writes the views into res, the GPUs' and allocations' hours
// into gpus and allocs, and drops the runs of allocations the
// utilization pass never saw.
func (f *shareFold) finish(res *fleet.Result, gpus map[fleet.GPUKey]*fleet.GPU, allocs map[fleet.AllocationKey]*fleet.Allocation) {
	if f == nil {
		return
	}
	clear(f.runs)
	res.Timeline = f.timeline.result()
	res.Usage = f.lanes.result()
	f.hours.done(gpus, allocs)
}
