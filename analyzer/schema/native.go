package schema

// NameNative is the schema of gpulens's own exporter (docs/METRICS.md).
const NameNative = "native"

// Native reads the gpulens exporter's series. They already carry the
// normalised labels; the aggregations only drop labels the analysis does
// not key on (method, gpu, pci_bus_id, ...) so that a change of measurement
// method does not split one allocation into two.
type Native struct{}

var _ Schema = Native{}

// Name implements Schema.
func (Native) Name() string { return NameNative }

// Allocation implements Schema.
func (Native) Allocation() string {
	return "max by " + by(AllocationLabels) + " (gpulens_container_gpu_allocation_ratio)"
}

// Utilization implements Schema.
func (Native) Utilization() string {
	return "max by " + by(UsageLabels) + " (gpulens_container_gpu_utilization_ratio)"
}

// MemoryUsed implements Schema.
func (Native) MemoryUsed() string {
	return "max by " + by(UsageLabels) + " (gpulens_container_gpu_memory_used_bytes)"
}

// GPU implements Schema.
func (Native) GPU() string {
	return "max by " + by(GPULabels) + " (gpulens_gpu_info)"
}

// GPUUtilization implements Schema. NVML has no utilization.gpu in MIG
// mode, so MIG GPUs fall back to the slices' SM activity weighted by the
// sevenths of compute each slice holds.
func (Native) GPUUtilization() string {
	return "max by " + by(GPULabels) + " (gpulens_gpu_utilization_ratio)" +
		" or sum by " + by(GPULabels) + " (gpulens_mig_sm_active_ratio * gpulens_mig_compute_slices) / 7"
}

// GPUMemoryTotal implements Schema.
func (Native) GPUMemoryTotal() string {
	return "max by " + by(GPULabels) + " (gpulens_gpu_memory_total_bytes)"
}

// GPUMemoryUsed implements Schema.
func (Native) GPUMemoryUsed() string {
	return "max by " + by(GPULabels) + " (gpulens_gpu_memory_used_bytes)"
}

// GPUEnergy implements Schema.
func (Native) GPUEnergy(rng, _ string) string {
	return "max by " + by(GPULabels) + " (increase(gpulens_gpu_energy_joules_total[" + rng + "]))"
}

// Identifying implements Schema.
func (Native) Identifying() []string {
	return []string{"gpulens_container_gpu_allocation_ratio", "gpulens_gpu_info"}
}
