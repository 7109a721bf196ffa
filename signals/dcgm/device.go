package dcgm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/signals"
)

// The device's readings (signals.Device). Under --kubernetes-virtual-gpus
// a shared GPU's device fields repeat on every tenant's series, and on MIG
// the device-wide fields repeat on every instance: per GPU they take the
// max, never the sum.

// In implements signals.Schema.
func (s Schema) In(sc signals.Scope) signals.Schema {
	return Schema{Scope: sc, Fields: s.Fields, TenantField: s.TenantField, MixedNames: s.MixedNames}
}

var migLabels = []string{signals.LabelNode, signals.LabelUUID, signals.LabelModel, signals.LabelGPUInstance, signals.LabelMIGProfile}

// maxGPU collapses repeated device fields onto one series per GPU.
func (s Schema) maxGPU(expr string) string {
	return "max by " + s.by(signals.GPULabels) + " (" + expr + ")"
}

func (s Schema) maxMIG(expr string) string { return "max by " + s.by(migLabels) + " (" + expr + ")" }

// MIGUtilization implements signals.Device: DCGM_FI_DEV_GPU_UTIL is
// absent on MIG instances (#353); the graphics engine's activity is the
// instance's.
func (s Schema) MIGUtilization() string { return s.maxMIG(Any(s.on(GREngineActive, AnyMIG))) }

var profFields = map[string]string{
	signals.ProfSMActive:     SMActive,
	signals.ProfSMOccupancy:  SMOccupancy,
	signals.ProfTensorActive: TensorActive,
	signals.ProfDRAMActive:   DRAMActive,
}

// Profiling implements signals.Device: the whole GPU's ratio only; on MIG
// the profiling fields are per instance (MIGProfiling), never added up.
func (s Schema) Profiling(ratio string) string {
	return s.maxGPU(Any(s.on(profFields[ratio], WholeGPU)))
}

// MIGProfiling implements signals.Device.
func (s Schema) MIGProfiling(ratio string) string {
	return s.maxMIG(Any(s.on(profFields[ratio], AnyMIG)))
}

// MIGMemoryUsed implements signals.Device.
func (s Schema) MIGMemoryUsed() string {
	return s.maxMIG(Any(s.on(FBUsed, AnyMIG)))
}

// MIGMemoryTotal implements signals.Device: used plus free, the lowest
// free of the same moment (see GPUMemoryTotal).
func (s Schema) MIGMemoryTotal() string {
	return fmt.Sprintf("%s + min by %s (%s)", s.maxMIG(Any(s.on(FBUsed, AnyMIG))), s.by(migLabels), Any(s.on(FBFree, AnyMIG)))
}

// Power implements signals.Device.
func (s Schema) Power() string { return s.maxGPU(Any(s.on(PowerUsage))) }

// Temperature implements signals.Device.
func (s Schema) Temperature() string { return s.maxGPU(Any(s.on(GPUTemp))) }

// Clock implements signals.Device, in hertz in every era (MHz before 4.9).
func (s Schema) Clock() string {
	return fmt.Sprintf(`label_replace(%s, "clock", "sm", "", "") or label_replace(%s, "clock", "memory", "", "")`,
		s.maxGPU(Any(s.on(SMClock))), s.maxGPU(Any(s.on(MemClock))))
}

// throttleBits are NVML's clocks-event reasons that cost performance.
var throttleBits = []struct {
	reason string
	bit    int
}{
	{signals.ThrottleSWPowerCap, ThrottleSWPowerCap}, {signals.ThrottleHWSlowdown, ThrottleHWSlowdown},
	{signals.ThrottleSWThermalSlowdown, ThrottleSWThermal}, {signals.ThrottleHWThermalSlowdown, ThrottleHWThermal},
	{signals.ThrottleHWPowerBrakeSlowdown, ThrottleHWPowerBrake},
}

// Throttle implements signals.Device: one bit of the bitmask a reason.
func (s Schema) Throttle() string {
	bits := s.maxGPU(Norm(s.throttleReasons()))
	var parts []string
	for _, b := range throttleBits {
		parts = append(parts, fmt.Sprintf(`label_replace(floor(%s / %d) %% 2 == 1, "reason", %q, "", "")`, bits, b.bit, b.reason))
	}
	return strings.Join(parts, " or ")
}

// ThrottledBy implements signals.Device: the reasons' bits of the
// bitmask, any of them set.
func (s Schema) ThrottledBy(reasons ...string) string {
	bits := s.maxGPU(Norm(s.throttleReasons()))
	var parts []string
	for _, b := range throttleBits {
		if slices.Contains(reasons, b.reason) {
			parts = append(parts, fmt.Sprintf("floor(%s / %d) %% 2", bits, b.bit))
		}
	}
	return "clamp_max(" + strings.Join(parts, " + ") + ", 1)"
}

// XIDEventsIn implements signals.Device: the XID field is the last code
// seen, one series per code (err_code) on current releases: aggregated
// per GPU, a change to a non-zero code is an event. The code is the
// value, so the count is labelled xid="any".
func (s Schema) XIDEventsIn(rng string) string {
	return fmt.Sprintf(`label_replace(sum_over_time((%s)[%s:1m]), "xid", "any", "", "")`, XIDEvent(s.on(XIDErrors), "1m", s.Scope.Labels(signals.GPULabels...)...), rng)
}

// ECCUncorrectedIn implements signals.Device: the volatile double-bit
// count, a gauge that only grows until the driver reloads.
func (s Schema) ECCUncorrectedIn(rng string) string {
	return "increase((" + s.maxGPU(Any(s.on(ECCDBEVolTotal))) + ")[" + rng + ":1m])"
}

// RemappedRows implements signals.Device.
func (s Schema) RemappedRows() string {
	return fmt.Sprintf(`label_replace(%s, "type", "uncorrectable", "", "") or label_replace(%s, "type", "correctable", "", "")`,
		s.maxGPU(Any(s.on(UncorrectableRemappedRows))), s.maxGPU(Any(s.on(CorrectableRemappedRows))))
}

// RemapFailed implements signals.Device.
func (s Schema) RemapFailed() string { return s.maxGPU(Any(s.on(RowRemapFailure))) }

// noteFields are the fields each noted signal reads.
var noteFields = map[string][]string{
	signals.ProfSMActive:    {SMActive},
	signals.ProfSMOccupancy: {SMOccupancy},
	signals.NoteThrottle:    {ClocksEventReasons, ClockThrottleReasons},
	signals.NoteECC:         {ECCDBEVolTotal},
}

// Note implements signals.Device: the fields outside the GPU Operator's
// default counters file.
func (Schema) Note(signal string) string {
	fields := noteFields[signal]
	if len(fields) == 0 || InDefaultCSV(fields[0]) {
		return ""
	}
	return " Needs " + strings.Join(fields, " or ") + ", which the GPU Operator's default counters file (dcp-metrics-included.csv) leaves out: empty on a stock install."
}
