package collector

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/signals/native"
)

// MIG instances get their own gpulens_mig_* families rather than extra
// labels on gpulens_gpu_*: a sum() over gpulens_gpu_memory_used_bytes must
// never add a parent GPU to its own slices.
var migLabels = []string{"node", "gpu", "uuid", "model", "gpu_instance", "compute_instance", "mig_profile", "mig_uuid"}

func migDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, migLabels, nil)
}

var (
	descMIGInfo = migDesc(native.MIGInfo,
		"A MIG instance (GPU instance + compute instance) of a GPU; always 1.")
	descMIGSlices = migDesc(native.MIGComputeSlices,
		"Compute slices of the GPU (of 7; of 4 on A30) that the MIG instance holds.")
	descMIGSlicesTotal = prometheus.NewDesc(native.GPUMIGComputeSlices,
		"MIG compute slices of the GPU, as NVML's largest GPU instance profile has them (7; 4 on A30); the denominator of "+native.MIGComputeSlices+".",
		[]string{"node", "gpu", "uuid", "model"}, nil)
	descMIGMemUsed = migDesc(native.MIGMemoryUsedBytes,
		"Memory allocated in the MIG instance.")
	descMIGMemTotal = migDesc(native.MIGMemoryTotalBytes,
		"Memory of the MIG instance.")
	descMIGSMActive = migDesc(native.MIGSMActiveRatio,
		"Fraction of the instance's SMs with at least one warp resident (NVML GPM); the per-slice load signal, since MIG has no utilization.gpu.")
	descMIGSMOccupancy = migDesc(native.MIGSMOccupancyRatio,
		"Resident warps relative to the instance's SMs' maximum (NVML GPM).")
	descMIGTensor = migDesc(native.MIGTensorActiveRatio,
		"Fraction of cycles any tensor pipe of the instance was active (NVML GPM).")
	descMIGDRAM = migDesc(native.MIGDRAMActiveRatio,
		"Fraction of the instance's peak DRAM bandwidth used (NVML GPM).")
)

// migBuilder emits one set of series per MIG instance of every GPU that is up.
type migBuilder struct{}

func (migBuilder) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descMIGInfo, descMIGSlices, descMIGSlicesTotal, descMIGMemUsed, descMIGMemTotal, descMIGSMActive,
		descMIGSMOccupancy, descMIGTensor, descMIGDRAM} {
		ch <- d
	}
}

func (migBuilder) build(st *State, emit func(sample)) {
	for i := range st.Snapshot.Devices {
		d := &st.Snapshot.Devices[i]
		if !d.Up {
			continue
		}
		gpuIdx := strconv.Itoa(d.Index)
		if d.MIGMode && d.MIGComputeSlices > 0 {
			emit(gauge(descMIGSlicesTotal, float64(d.MIGComputeSlices), st.Node, gpuIdx, d.UUID, d.Model))
		}
		for j := range d.Instances {
			in := &d.Instances[j]
			lv := []string{st.Node, gpuIdx, d.UUID, d.Model, strconv.Itoa(in.GPUInstanceID),
				strconv.Itoa(in.ComputeInstanceID), in.Profile, in.UUID}
			emit(gauge(descMIGInfo, 1, lv...))
			emit(gauge(descMIGSlices, float64(in.Slices), lv...))
			for _, m := range []struct {
				desc *prometheus.Desc
				v    float64
			}{
				{descMIGMemUsed, in.MemoryUsedBytes}, {descMIGMemTotal, in.MemoryTotalBytes},
				{descMIGSMActive, in.SMActive}, {descMIGSMOccupancy, in.SMOccupancy},
				{descMIGTensor, in.TensorActive}, {descMIGDRAM, in.DRAMActive},
			} {
				if gpu.Valid(m.v) {
					emit(gauge(m.desc, m.v, lv...))
				}
			}
		}
	}
}
