package fleet

import "time"

// The hourly ledger (analyzer/ledger) charges every GPU hour by hour: the
// analysis's passes fold, where Sharding.Lanes asks for them, the time
// each GPU reported and each allocation held and used in each hour of the
// window, from the values they read anyway. Per hour, not per step: a
// week is 168 values a GPU and four an allocation's hour.

// HourGrid is the clock hours (UTC) the window's steps fall in. A step at
// t stands for (t−Step, t], so it belongs to the hour its interval starts
// in: with one-minute steps, the hour from 10:00 holds the steps at 10:01
// to 11:00. Hour i starts at Start + i hours.
func (w Window) HourGrid() (start time.Time, hours int) {
	first, steps := w.Grid()
	if steps == 0 {
		return first, 0
	}
	h0 := first.Add(-w.Step).Truncate(time.Hour)
	return h0, w.StepHour(steps-1) + 1
}

// StepHour is the hour of HourGrid that step i of the window falls in.
func (w Window) StepHour(i int) int {
	first, _ := w.Grid()
	t0 := first.Add(-w.Step)
	h0 := t0.Truncate(time.Hour)
	ms := t0.Sub(h0).Milliseconds() + int64(i)*w.Step.Milliseconds()
	return int(floorDiv(ms, time.Hour.Milliseconds()))
}

// AllocationHours is an allocation's hold and use in each hour of the
// window's HourGrid, from hour First to the last it was held in. Each is
// in hours of the window's steps (steps × Step), so that an allocation's
// hours add up to its window figures.
type AllocationHours struct {
	First int
	// Held is the time it was held in the hour; GPUHours that time × its
	// share at each step (AllocatedGPUHours, hour by hour).
	Held, GPUHours []float64
	// Measured is the part of Held with a utilization reading, and Used
	// that time × the utilization (of the share, at least 0; above 1
	// where a time-sliced tenant used what its co-tenants left) at each
	// of its steps: Used over Measured is the hour's average utilization,
	// as AvgUtilization is the window's.
	Measured, Used []float64
}

// At is the hour's figures (zero outside the allocation's hours).
func (h *AllocationHours) At(hour int) (held, gpuHours, measured, used float64) {
	if h == nil || hour < h.First || hour-h.First >= len(h.Held) {
		return 0, 0, 0, 0
	}
	i := hour - h.First
	return h.Held[i], h.GPUHours[i], h.Measured[i], h.Used[i]
}

// The usage rule, one for the ledger and the report: an allocation used
// what it held × its utilization, capped at its share (a time-sliced
// tenant's reading is of the whole device and can exceed it), hour by
// hour where the analysis folded its hours. Hour by hour, a tenant busy
// in some hours and idle in others is not let off the idle ones by the
// busy ones, as a window average would.

// Utilization is the hour's average utilization, in [0, 1]: the hour's
// own where it had a reading, else window (the allocation's over the
// window, also clamped).
func (h *AllocationHours) Utilization(hour int, window float64) float64 {
	_, _, m, u := h.At(hour)
	if m > 0 {
		return min(1, max(0, u/m))
	}
	return min(1, max(0, window))
}

// WindowUtilization is the allocation's average utilization over the
// hours folded, and whether any hour had a reading.
func (h *AllocationHours) WindowUtilization() (float64, bool) {
	var measured, used float64
	if h != nil {
		for i := range h.Held {
			measured += h.Measured[i]
			used += h.Used[i]
		}
	}
	if measured == 0 {
		return 0, false
	}
	return used / measured, true
}

// UsedGPUHours is what x used by the usage rule, and whether it had a
// utilization reading at all (without one it is 0: the callers decide
// what an unmeasured hold costs).
func (x *Allocation) UsedGPUHours() (float64, bool) {
	if x.Hours == nil {
		if x.UtilizationSteps == 0 {
			return 0, false
		}
		return max(0, x.AllocatedGPUHours) * min(1, max(0, x.AvgUtilization)), true
	}
	window, ok := x.Hours.WindowUtilization()
	if !ok {
		return 0, false
	}
	var used float64
	for i, g := range x.Hours.GPUHours {
		used += max(0, g) * x.Hours.Utilization(x.Hours.First+i, window)
	}
	return used, true
}
