package dcgm

import (
	"fmt"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// Health implements signals.Schema.
//
// DCGM_FI_DEV_XID_ERRORS is a gauge holding the last XID seen, not a
// counter. An event is a step at which it changed to a non-zero code; the
// code it holds at the window's start happened before the window, and a
// series that starts inside the window (an exporter restart, a new pod's
// copy) carries an old code until it changes. Two events within one step
// count as one: a lower bound.
func (s Schema) Health(o signals.Over) signals.Health {
	key := s.Scope.Labels(signals.GPUKey...)
	xid := XID(s.on(XIDErrors), key...)
	changed := XIDChanged(s.on(XIDErrors), o.Step, key...)
	bits := norm(s.throttleReasons())
	return signals.Health{
		Down:      fmt.Sprintf("%s == bool %d", xid, vocab.XIDFallenOffBus),
		XIDEvents: o.Apply(signals.SumOverTime, `count_values by `+s.by(signals.GPUKey)+` ("xid", `+changed+`)`),
		// The gauge holds one code at a time, the value the code: each
		// step at which it changed, whatever the code, as XIDEvents
		// counts them.
		XIDRaised: changed,
		Thermal:   fmt.Sprintf("max by %s (clamp_max(floor(%[2]s / 32) %% 2 + floor(%[2]s / 64) %% 2, 1))", s.by(signals.GPUKey), bits),
	}
}

// Optional implements signals.OptionalSignals: the throttle reasons are outside
// the GPU Operator's default counters file (dcp-metrics-included.csv).
func (s Schema) Optional() map[string][]string {
	return map[string][]string{vocab.SignalThermal: {ClocksEventReasons, ClockThrottleReasons}}
}
