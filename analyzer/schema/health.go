package schema

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
)

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
	Apply       func(fn, expr string) string
}

// applicationXIDs are the XIDs NVIDIA documents as caused by the
// application, not the GPU: 13 graphics engine exception, 31 GPU memory
// page fault, 43 GPU stopped processing (a kernel killed), 45 preemptive
// cleanup after a process was killed. A workload's bug, a GPU's health is
// not in question.
var applicationXIDs = []string{"13", "31", "43", "45"}

// ApplicationXID says whether the XID code is a workload error rather than
// a GPU fault.
func ApplicationXID(code string) bool { return slices.Contains(applicationXIDs, code) }

// Health implements Schema.
//
// The exporter creates an XID series with its first event, so increase()
// would miss that event; the count is the last value minus the value at
// the window's start, or all of it when the series is new. An exporter
// restart can only make this an undercount (clamped at 0).
//
// A code's counter that grew since the step before, or appeared (its first
// event), is an XID raised at that step. The step before is the last value
// within the hour before it, so that a scrape gap shorter than that is no
// new event. Only the application's codes are raised: XIDRaised exists to
// name the tenant, and a GPU fault's codes are the GPU's.
func (Native) Health(o Over) Health {
	const xid = native.GPUXIDErrorsTotal
	var raised []string
	for _, code := range applicationXIDs {
		now := xid + `{xid="` + code + `"}`
		before := "last_over_time(" + now + "[1h] offset " + o.Step + ")"
		raised = append(raised, fmt.Sprintf("0 * max by (node, uuid) ((%[1]s - %[2]s) > 0 or (%[1]s unless %[2]s)) + %[3]s", now, before, code))
	}
	return Health{
		Down: "min by " + by(GPUKey) + " (" + native.GPUUp + ") == bool 0",
		XIDEvents: fmt.Sprintf("sum by (node, uuid, xid) (clamp_min(max_over_time(%[1]s[%[2]s]) - (last_over_time(%[1]s[5m] offset %[2]s) or 0 * max_over_time(%[1]s[%[2]s])), 0))",
			xid, o.Range),
		XIDRaised: "max by (node, uuid) (" + strings.Join(raised, " or ") + ")",
		Thermal:   `max by ` + by(GPUKey) + ` (` + native.GPUThrottleActive + `{reason=~".*thermal.*"})`,
	}
}

// Health implements Schema.
//
// DCGM_FI_DEV_XID_ERRORS is a gauge holding the last XID seen, not a
// counter. An event is a step at which it changed to a non-zero code; the
// code it holds at the window's start happened before the window, and a
// series that starts inside the window (an exporter restart, a new pod's
// copy) carries an old code until it changes. Two events within one step
// count as one: a lower bound.
func (DCGM) Health(o Over) Health {
	xidAt := func(offset string) string {
		return "max by " + by(GPUKey) + " (" + norm(dcgm.XIDErrors+offset) + ")"
	}
	xid := xidAt("")
	changed := fmt.Sprintf("(%s != %s) > 0", xid, xidAt(" offset "+o.Step))
	bits := norm(dcgm.ThrottleReasons())
	return Health{
		Down:      fmt.Sprintf("%s == bool %d", xid, dcgm.XIDFallenOffBus),
		XIDEvents: o.Apply("sum_over_time", `count_values by (node, uuid) ("xid", `+changed+`)`),
		// The gauge holds one code at a time, the value the code: each
		// step at which it changed, whatever the code, as XIDEvents
		// counts them.
		XIDRaised: changed,
		Thermal:   fmt.Sprintf("max by %s (clamp_max(floor(%[2]s / 32) %% 2 + floor(%[2]s / 64) %% 2, 1))", by(GPUKey), bits),
	}
}

// Optional implements OptionalSignals: the throttle reasons are outside
// the GPU Operator's default counters file (dcp-metrics-included.csv).
func (DCGM) Optional() map[string][]string {
	return map[string][]string{SignalThermal: {dcgm.ClocksEventReasons, dcgm.ClockThrottleReasons}}
}
