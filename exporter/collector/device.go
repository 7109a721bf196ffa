package collector

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/signals/native"
)

// deviceLabels identify a physical GPU on every per-GPU series. The model is
// repeated on each series (it never changes for a uuid, so it adds no
// cardinality) because every analysis groups by model and a join against
// gpulens_gpu_info on each query would cost more than the label.
var deviceLabels = []string{"node", "gpu", "uuid", "model"}

func deviceDesc(name, help string, extra ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, append(append([]string{}, deviceLabels...), extra...), nil)
}

var (
	descGPUInfo = prometheus.NewDesc(native.GPUInfo,
		"Identity of a GPU; always 1.",
		append(append([]string{}, deviceLabels...), "pci_bus_id", "driver_version", "cuda_version", "mig_mode"), nil)
	descGPUUp = deviceDesc(native.GPUUp,
		"1 when the GPU answered the last collection, 0 when it is lost, hung or failing.")
	descUtil = deviceDesc(native.GPUUtilizationRatio,
		"Fraction of the last sample period during which a kernel ran on the GPU (NVML utilization.gpu). Absent in MIG mode.")
	descMemUtil = deviceDesc(native.GPUMemoryUtilizationRatio,
		"Fraction of the last sample period during which device memory was read or written (NVML utilization.memory).")
	descSMActive = deviceDesc(native.GPUSMActiveRatio,
		"Fraction of SMs with at least one warp resident, averaged over the collection interval (NVML GPM).")
	descSMOccupancy = deviceDesc(native.GPUSMOccupancyRatio,
		"Resident warps relative to the SMs' maximum, averaged over the collection interval (NVML GPM).")
	descTensor = deviceDesc(native.GPUTensorActiveRatio,
		"Fraction of cycles any tensor pipe was active, averaged over the collection interval (NVML GPM).")
	descDRAM = deviceDesc(native.GPUDRAMActiveRatio,
		"Fraction of peak DRAM bandwidth used, averaged over the collection interval (NVML GPM).")
	descMemUsed = deviceDesc(native.GPUMemoryUsedBytes,
		"Device memory allocated by processes and the driver.")
	descMemTotal = deviceDesc(native.GPUMemoryTotalBytes,
		"Device memory installed.")
	descMemReserved = deviceDesc(native.GPUMemoryReservedBytes,
		"Device memory reserved by the driver and firmware, unavailable to processes.")
	descPower = deviceDesc(native.GPUPowerWatts,
		"Power draw of the board.")
	descEnergy = deviceDesc(native.GPUEnergyJoulesTotal,
		"Energy consumed since the driver was loaded.")
	descTemp = deviceDesc(native.GPUTemperatureCelsius,
		"GPU core temperature.")
	descClock = deviceDesc(native.GPUClockHertz,
		"Current clock frequency.", "clock")
	descThrottle = deviceDesc(native.GPUThrottleActive,
		"1 while NVML reports the clocks-event reason as active.", "reason")
	descECC = deviceDesc(native.GPUECCErrorsTotal,
		"ECC memory errors over the GPU's lifetime (aggregate counter).", "type")
	descRemapped = deviceDesc(native.GPURemappedRows,
		"Memory rows remapped over the GPU's lifetime.", "type")
	descRemapPending = deviceDesc(native.GPURowRemapPending,
		"1 when a row remap is pending and the GPU needs a reset.")
	descRemapFailed = deviceDesc(native.GPURowRemapFailed,
		"1 when a row remap failed; the GPU should be replaced.")
	descXID = deviceDesc(native.GPUXIDErrorsTotal,
		"XID critical error events received since the exporter started.", "xid")
	descProcesses = deviceDesc(native.GPUProcesses,
		"Compute processes running on the GPU, MIG instances included.")
)

// deviceBuilder emits the per-physical-GPU families.
type deviceBuilder struct{}

func (deviceBuilder) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descGPUInfo, descGPUUp, descUtil, descMemUtil, descSMActive,
		descSMOccupancy, descTensor, descDRAM, descMemUsed, descMemTotal, descMemReserved, descPower,
		descEnergy, descTemp, descClock, descThrottle, descECC, descRemapped, descRemapPending,
		descRemapFailed, descXID, descProcesses} {
		ch <- d
	}
}

func (deviceBuilder) build(st *State, emit func(sample)) {
	s := st.Snapshot
	for i := range s.Devices {
		d := &s.Devices[i]
		lv := []string{st.Node, strconv.Itoa(d.Index), d.UUID, d.Model}
		emit(gauge(descGPUInfo, 1, append(lv[:4:4], d.PCIBusID, s.DriverVersion, s.CUDAVersion, strconv.FormatBool(d.MIGMode))...))
		emit(gauge(descGPUUp, boolFloat(d.Up), lv...))
		// XID counts survive a lost GPU: the XID is usually why it is lost.
		for xid, n := range d.XIDErrors {
			emit(counter(descXID, float64(n), append(lv[:4:4], strconv.FormatUint(xid, 10))...))
		}
		if !d.Up {
			continue
		}
		opt := func(desc *prometheus.Desc, v float64) {
			if gpu.Valid(v) {
				emit(gauge(desc, v, lv...))
			}
		}
		opt(descUtil, d.Utilization)
		opt(descMemUtil, d.MemoryUtilization)
		opt(descSMActive, d.SMActive)
		opt(descSMOccupancy, d.SMOccupancy)
		opt(descTensor, d.TensorActive)
		opt(descDRAM, d.DRAMActive)
		opt(descMemUsed, d.MemoryUsedBytes)
		opt(descMemTotal, d.MemoryTotalBytes)
		opt(descMemReserved, d.MemoryReservedBytes)
		opt(descPower, d.PowerWatts)
		opt(descTemp, d.TemperatureC)
		if gpu.Valid(d.EnergyJoules) {
			emit(counter(descEnergy, d.EnergyJoules, lv...))
		}
		if gpu.Valid(d.SMClockHz) {
			emit(gauge(descClock, d.SMClockHz, append(lv[:4:4], "sm")...))
		}
		if gpu.Valid(d.MemClockHz) {
			emit(gauge(descClock, d.MemClockHz, append(lv[:4:4], "memory")...))
		}
		if d.ThrottleValid {
			for _, r := range gpu.ThrottleReasonNames {
				emit(gauge(descThrottle, boolFloat(d.ThrottleReasons&r.Bit != 0), append(lv[:4:4], r.Name)...))
			}
		}
		if gpu.Valid(d.ECCCorrected) {
			emit(counter(descECC, d.ECCCorrected, append(lv[:4:4], "corrected")...))
		}
		if gpu.Valid(d.ECCUncorrected) {
			emit(counter(descECC, d.ECCUncorrected, append(lv[:4:4], "uncorrected")...))
		}
		if d.RemappedRowsValid {
			emit(gauge(descRemapped, d.RemappedRowsCorrectable, append(lv[:4:4], "correctable")...))
			emit(gauge(descRemapped, d.RemappedRowsUncorrectable, append(lv[:4:4], "uncorrectable")...))
			emit(gauge(descRemapPending, boolFloat(d.RemappedRowsPending), lv...))
			emit(gauge(descRemapFailed, boolFloat(d.RemappedRowsFailure), lv...))
		}
		emit(gauge(descProcesses, float64(len(d.Processes)), lv...))
	}
}
