package signals

import "slices"

// Health is one schema's per-GPU health signals, each with GPUKey labels.
// An empty expression means the exporter has no such signal.
type Health struct {
	// Down is 1 at every step the GPU was lost or failing, else 0; the
	// caller evaluates it at each step of the window.
	Down string
	// XIDEvents is, evaluated once at the window's end, the number of XID
	// events within the window by GPU and xid label (the code).
	XIDEvents string
	// XIDRaised is, evaluated at each step, the code of an XID raised on
	// the GPU since the step before, by GPUKey (value the code, no xid
	// label, so that it joins one to one with who held the GPU then); no
	// series where none was. It holds every application XID
	// (ApplicationXID) XIDEvents counts, at the step it was first seen:
	// what ties one to the allocation that held the GPU when it was
	// raised. Two codes within one step read as the higher.
	XIDRaised string
	// Thermal is 1 while a thermal slowdown (hardware or software) is
	// active and 0 otherwise; evaluated at each step.
	Thermal string
}

// Over builds the expressions that span a window: Range is the window as a
// range duration ("1w"), Step the resolution ("1m"), and Apply(fn, expr)
// is fn over expr evaluated at every step of the window, the caller's
// subquery with its store-independent bounds.
type Over struct {
	Range, Step string
	Apply       func(fn Fn, expr string) string
}

// ApplicationXIDs are the XIDs NVIDIA documents as caused by the
// application, not the GPU: 13 graphics engine exception, 31 GPU memory
// page fault, 43 GPU stopped processing (a kernel killed), 45 preemptive
// cleanup after a process was killed. A workload's bug, a GPU's health is
// not in question.
var ApplicationXIDs = []string{"13", "31", "43", "45"}

// ApplicationXID says whether the XID code is a workload error rather than
// a GPU fault.
func ApplicationXID(code string) bool { return slices.Contains(ApplicationXIDs, code) }

// XIDHolders is every application XID of a window with each allocation
// that held its GPU at that step: one series per event and holder (and one
// per event without one) with the allocation's key, the code in xid and
// the step in label at (Unix seconds), from count_values at each step of
// w. allocations is a schema's allocations where only presence matters,
// raised its Health's XIDRaised.
func XIDHolders(w Over, allocations, raised, at string) string {
	keys := AllocationKeyLabels
	raised = "(" + raised + ")"
	held := GroupLeft(GroupBy(keys, allocations), "*", GPUKey, nil, raised)
	codes := CountValues("xid", keys, "("+held+") or "+raised)
	return w.Apply(CountOverTime, CountValues(at, append(slices.Clone(keys), "xid"), "0 * "+codes+" + time()"))
}
