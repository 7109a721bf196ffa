package nvml

import (
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// readGauges reads the whole-device values. Each is left NA when its call
// does not answer.
func (d *device) readGauges(h gonvml.Device, out *gpu.Device) {
	c := &d.c

	if u, ok := get(c, callGetUtilizationRates, h.GetUtilizationRates); ok {
		out.Utilization = percent(float64(u.Gpu))
		out.MemoryUtilization = percent(float64(u.Memory))
	}

	// _v2 separates the driver's reservation from used memory; drivers
	// before R510 only have the v1 call, which counts it as used.
	if m, ok := get(c, callGetMemoryInfoV2, h.GetMemoryInfo_v2); ok {
		out.MemoryUsedBytes = float64(m.Used)
		out.MemoryTotalBytes = float64(m.Total)
		out.MemoryReservedBytes = float64(m.Reserved)
	} else if m, ok := get(c, callGetMemoryInfo, h.GetMemoryInfo); ok {
		out.MemoryUsedBytes = float64(m.Used)
		out.MemoryTotalBytes = float64(m.Total)
	}

	if mw, ok := get(c, callGetPowerUsage, h.GetPowerUsage); ok {
		out.PowerWatts = float64(mw) * wattsPerMW
	}
	if mj, ok := get(c, callGetTotalEnergyConsumption, h.GetTotalEnergyConsumption); ok {
		out.EnergyJoules = float64(mj) * joulesPerMJ
	}
	if t, ok := get(c, callGetTemperature, func() (uint32, gonvml.Return) {
		return h.GetTemperature(gonvml.TEMPERATURE_GPU)
	}); ok {
		out.TemperatureC = float64(t)
	}
	if mhz, ok := get(c, callGetClockInfo, func() (uint32, gonvml.Return) {
		return h.GetClockInfo(gonvml.CLOCK_SM)
	}); ok {
		out.SMClockHz = float64(mhz) * hzPerMHz
	}
	if mhz, ok := get(c, callGetClockInfo, func() (uint32, gonvml.Return) {
		return h.GetClockInfo(gonvml.CLOCK_MEM)
	}); ok {
		out.MemClockHz = float64(mhz) * hzPerMHz
	}

	// "Throttle reasons" were renamed "clocks event reasons" in R535; the
	// old entry point remains for older drivers.
	if r, ok := get(c, callGetCurrentClocksEventReasons, h.GetCurrentClocksEventReasons); ok {
		out.ThrottleReasons, out.ThrottleValid = r, true
	} else if r, ok := get(c, callGetCurrentClocksThrottleReasons, h.GetCurrentClocksThrottleReasons); ok {
		out.ThrottleReasons, out.ThrottleValid = r, true
	}

	// NOT_SUPPORTED here usually means ECC is disabled.
	if n, ok := get(c, callGetTotalEccErrors, func() (uint64, gonvml.Return) {
		return h.GetTotalEccErrors(gonvml.MEMORY_ERROR_TYPE_CORRECTED, gonvml.AGGREGATE_ECC)
	}); ok {
		out.ECCCorrected = float64(n)
	}
	if n, ok := get(c, callGetTotalEccErrors, func() (uint64, gonvml.Return) {
		return h.GetTotalEccErrors(gonvml.MEMORY_ERROR_TYPE_UNCORRECTED, gonvml.AGGREGATE_ECC)
	}); ok {
		out.ECCUncorrected = float64(n)
	}

	var corr, unc int
	var pending, failed bool
	if do(c, callGetRemappedRows, func() (ret gonvml.Return) {
		corr, unc, pending, failed, ret = h.GetRemappedRows()
		return ret
	}) {
		out.RemappedRowsCorrectable = float64(corr)
		out.RemappedRowsUncorrectable = float64(unc)
		out.RemappedRowsPending = pending
		out.RemappedRowsFailure = failed
		out.RemappedRowsValid = true
	}
}
