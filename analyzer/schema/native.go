package schema

import (
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
)

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
	return "max by " + by(AllocationLabels) + " (" + unexport(native.ContainerGPUAllocationRatio, tenantLabels...) + ")"
}

// Utilization implements Schema. A MIG slice that gpulens cannot measure
// (Ampere has no GPM, so NVML has no per-instance activity) takes
// dcgm-exporter's DCGM_FI_PROF_GR_ENGINE_ACTIVE of its GPU instance where
// dcgm-exporter is scraped into the same store: the instance's busy
// fraction, which is the slice's own. Joined on the node, GPU and GPU
// instance, so the tenant is always gpulens's.
func (Native) Utilization() string {
	own := "max by " + by(UsageLabels) + " (" + unexport(native.ContainerGPUUtilizationRatio, tenantLabels...) + ")"
	migAllocs := "max by " + by(UsageLabels) + " (" + unexport(native.ContainerGPUAllocationRatio+`{sharing="mig"}`, tenantLabels...) + ")"
	return own + " or (" + dcgmSliceActivity + " + on (node, uuid, gpu_instance) group_right () 0 * " + migAllocs + ")"
}

// dcgmSliceActivity is dcgm-exporter's graphics-engine activity per MIG
// GPU instance, 0..1, by node, uuid and gpu_instance. dcgm-exporter's
// Hostname is the node, as for the DCGM schema.
var dcgmSliceActivity = "max by (node, uuid, gpu_instance) (" + norm(dcgm.GREngineActive+"{"+dcgm.LabelGPUInstance+`!=""}`) + ")"

// MemoryUsed implements Schema.
func (Native) MemoryUsed() string {
	return "max by " + by(UsageLabels) + " (" + unexport(native.ContainerGPUMemoryUsedBytes, tenantLabels...) + ")"
}

// GPU implements Schema.
func (Native) GPU() string {
	return "max by " + by(GPULabels) + " (" + native.GPUInfo + ")"
}

// GPUUtilization implements Schema. NVML has no utilization.gpu in MIG
// mode, so MIG GPUs fall back to the slices' SM activity weighted by the
// compute slices each holds, of the GPU's total: as the exporter read it
// from NVML's profiles, else (an older exporter) the catalog's.
//
// Ampere MIG GPUs, which have no GPM, take their slices' activity from
// dcgm-exporter where it is scraped too (see Utilization).
func (Native) GPUUtilization() string {
	total := " / on (node, uuid, model) group_left () (max by " + by(GPULabels) + " (" + native.GPUMIGComputeSlices + ") or " +
		signals.MIGTotal(native.GPUInfo, `mig_mode!="false", `, LabelModel, func(s string) string { return s }, GPULabels...) + ")"
	slices := "max by (node, uuid, model, gpu_instance) (" + native.MIGComputeSlices + ")"
	return "max by " + by(GPULabels) + " (" + native.GPUUtilizationRatio + ")" +
		" or sum by " + by(GPULabels) + " (" + native.MIGSMActiveRatio + " * " + native.MIGComputeSlices + ")" + total +
		" or sum by " + by(GPULabels) + " (" + dcgmSliceActivity + " * on (node, uuid, gpu_instance) group_right () " + slices + ")" + total
}

// GPUMemoryTotal implements Schema.
func (Native) GPUMemoryTotal() string {
	return "max by " + by(GPULabels) + " (" + native.GPUMemoryTotalBytes + ")"
}

// GPUMemoryUsed implements Schema.
func (Native) GPUMemoryUsed() string {
	return "max by " + by(GPULabels) + " (" + native.GPUMemoryUsedBytes + ")"
}

// GPUEnergy implements Schema.
func (Native) GPUEnergy(rng, _ string) string {
	return "max by " + by(GPULabels) + " (increase(" + native.GPUEnergyJoulesTotal + "[" + rng + "]))"
}

// Present are the metric names at least one of which every reporting GPU
// has a series of, whoever holds it: gpulens_gpu_info alone, where every
// allocation series is beside a GPU's. What reads every sample to learn
// which clusters report (query.ClusterValues) reads half as many as with
// Identifying's.
func (Native) Present() []string { return []string{native.GPUInfo} }

// Identifying implements Schema.
func (Native) Identifying() []string {
	return []string{native.ContainerGPUAllocationRatio, native.GPUInfo}
}
