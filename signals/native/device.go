package native

import (
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/signals"
)

// The device's readings (signals.Device). gpulens-exporter names them
// itself, in base units; aggregations by GPU only drop the labels a
// reading does not key on.

// In implements signals.Schema.
func (s Schema) In(sc signals.Scope) signals.Schema { return Schema{Scope: sc} }

var migLabels = []string{signals.LabelNode, signals.LabelUUID, signals.LabelModel, signals.LabelGPUInstance, signals.LabelMIGProfile}

// gpu is metric's max per GPU and the extra labels, in the scope.
func (s Schema) gpu(metric string, extra []string, m ...string) string {
	return "max by " + s.by(append(append([]string{}, signals.GPULabels...), extra...)) + " (" + s.sel(metric, m...) + ")"
}

func (s Schema) mig(metric string) string {
	return "max by " + s.by(migLabels) + " (" + s.sel(metric) + ")"
}

// MIGUtilization implements signals.Device.
func (s Schema) MIGUtilization() string { return s.mig(MIGSMActiveRatio) }

// Profiling implements signals.Device: GPM's ratios, named after the
// ratio (gpulens_gpu_sm_active_ratio, ...).
func (s Schema) Profiling(ratio string) string { return s.gpu("gpulens_gpu_"+ratio+"_ratio", nil) }

// MIGProfiling implements signals.Device.
func (s Schema) MIGProfiling(ratio string) string { return s.mig("gpulens_mig_" + ratio + "_ratio") }

// MIGMemoryUsed implements signals.Device.
func (s Schema) MIGMemoryUsed() string { return s.mig(MIGMemoryUsedBytes) }

// MIGMemoryTotal implements signals.Device.
func (s Schema) MIGMemoryTotal() string { return s.mig(MIGMemoryTotalBytes) }

// Power implements signals.Device.
func (s Schema) Power() string { return s.gpu(GPUPowerWatts, nil) }

// Temperature implements signals.Device.
func (s Schema) Temperature() string { return s.gpu(GPUTemperatureCelsius, nil) }

// Clock implements signals.Device.
func (s Schema) Clock() string { return s.gpu(GPUClockHertz, []string{"clock"}) }

// idleReasons are clocks-event reasons that cost no performance: an idle
// GPU, or clocks someone set on purpose.
const idleReasons = "gpu_idle|applications_clocks_setting|display_clock_setting"

// Throttle implements signals.Device.
func (s Schema) Throttle() string {
	return s.gpu(GPUThrottleActive, []string{"reason"}, `reason!~"`+idleReasons+`"`) + " == 1"
}

// ThrottledBy implements signals.Device.
func (s Schema) ThrottledBy(reasons ...string) string {
	return s.gpu(GPUThrottleActive, nil, `reason=~"`+strings.Join(reasons, "|")+`"`)
}

// XIDEventsIn implements signals.Device: the counter per code, by how
// much it grew since rng ago. The exporter creates a code's series with
// its first event, which increase() would miss: a series that is new
// within rng counts all of its events. A counter that went down (the
// exporter restarted) counts none; one that did not move counts 0.
func (s Schema) XIDEventsIn(rng string) string {
	x := s.sel(GPUXIDErrorsTotal)
	return fmt.Sprintf("sum by %s ((%[2]s - %[2]s offset %[3]s) >= 0 or (%[2]s unless %[2]s offset %[3]s))",
		s.by(append(append([]string{}, signals.GPULabels...), "xid")), x, rng)
}

// ECCUncorrectedIn implements signals.Device.
func (s Schema) ECCUncorrectedIn(rng string) string {
	return fmt.Sprintf("sum by %s (increase(%s[%s]))", s.by(signals.GPULabels), s.sel(GPUECCErrorsTotal, `type="uncorrected"`), rng)
}

// RemappedRows implements signals.Device.
func (s Schema) RemappedRows() string { return s.gpu(GPURemappedRows, []string{"type"}) }

// RemapFailed implements signals.Device.
func (s Schema) RemapFailed() string { return s.gpu(GPURowRemapFailed, nil) }

// Note implements signals.Device: gpulens-exporter emits every reading
// its GPU supports.
func (Schema) Note(string) string { return "" }
