package native

import (
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
)

// SchemaName is the schema of gpulens's own exporter (docs/METRICS.md).
const SchemaName = "native"

// Schema reads the gpulens exporter's series. They already carry the
// normalised labels; the aggregations only drop labels the analysis does
// not key on (method, gpu, pci_bus_id, ...) so that a change of measurement
// method does not split one allocation into two.
type Schema struct{}

var _ signals.Schema = Schema{}

// Name implements signals.Schema.
func (Schema) Name() string { return SchemaName }

// Allocation implements signals.Schema.
func (Schema) Allocation() string {
	return "max by " + by(signals.AllocationLabels) + " (" + unexport(ContainerGPUAllocationRatio, tenantLabels...) + ")"
}

// Utilization implements signals.Schema. A MIG slice that gpulens cannot measure
// (Ampere has no GPM, so NVML has no per-instance activity) takes
// dcgm-exporter's DCGM_FI_PROF_GR_ENGINE_ACTIVE of its GPU instance where
// dcgm-exporter is scraped into the same store: the instance's busy
// fraction, which is the slice's own. Joined on the node, GPU and GPU
// instance, so the tenant is always gpulens's.
func (Schema) Utilization() string {
	own := "max by " + by(signals.UsageLabels) + " (" + unexport(ContainerGPUUtilizationRatio, tenantLabels...) + ")"
	migAllocs := "max by " + by(signals.UsageLabels) + " (" + unexport(ContainerGPUAllocationRatio+`{sharing="mig"}`, tenantLabels...) + ")"
	return own + " or (" + dcgmSliceActivity + " + on (node, uuid, gpu_instance) group_right () 0 * " + migAllocs + ")"
}

// dcgmSliceActivity is dcgm-exporter's graphics-engine activity per MIG
// GPU instance, 0..1, by node, uuid and gpu_instance. dcgm-exporter's
// Hostname is the node, as for the DCGM schema.
var dcgmSliceActivity = "max by (node, uuid, gpu_instance) (" + dcgm.Norm(dcgm.GREngineActive+"{"+dcgm.LabelGPUInstance+`!=""}`) + ")"

// MemoryUsed implements signals.Schema.
func (Schema) MemoryUsed() string {
	return "max by " + by(signals.UsageLabels) + " (" + unexport(ContainerGPUMemoryUsedBytes, tenantLabels...) + ")"
}

// GPU implements signals.Schema.
func (Schema) GPU() string {
	return "max by " + by(signals.GPULabels) + " (" + GPUInfo + ")"
}

// GPUUtilization implements signals.Schema. NVML has no utilization.gpu in MIG
// mode, so MIG GPUs fall back to the slices' SM activity weighted by the
// compute slices each holds, of the GPU's total: as the exporter read it
// from NVML's profiles, else (an older exporter) the catalog's.
//
// Ampere MIG GPUs, which have no GPM, take their slices' activity from
// dcgm-exporter where it is scraped too (see Utilization).
func (Schema) GPUUtilization() string {
	total := " / on (node, uuid, model) group_left () (max by " + by(signals.GPULabels) + " (" + GPUMIGComputeSlices + ") or " +
		signals.MIGTotal(GPUInfo, `mig_mode!="false", `, signals.LabelModel, func(s string) string { return s }, signals.GPULabels...) + ")"
	slices := "max by (node, uuid, model, gpu_instance) (" + MIGComputeSlices + ")"
	return "max by " + by(signals.GPULabels) + " (" + GPUUtilizationRatio + ")" +
		" or sum by " + by(signals.GPULabels) + " (" + MIGSMActiveRatio + " * " + MIGComputeSlices + ")" + total +
		" or sum by " + by(signals.GPULabels) + " (" + dcgmSliceActivity + " * on (node, uuid, gpu_instance) group_right () " + slices + ")" + total
}

// GPUMemoryTotal implements signals.Schema.
func (Schema) GPUMemoryTotal() string {
	return "max by " + by(signals.GPULabels) + " (" + GPUMemoryTotalBytes + ")"
}

// GPUMemoryUsed implements signals.Schema.
func (Schema) GPUMemoryUsed() string {
	return "max by " + by(signals.GPULabels) + " (" + GPUMemoryUsedBytes + ")"
}

// GPUEnergy implements signals.Schema.
func (Schema) GPUEnergy(rng, _ string) string {
	return "max by " + by(signals.GPULabels) + " (increase(" + GPUEnergyJoulesTotal + "[" + rng + "]))"
}

// Present are the metric names at least one of which every reporting GPU
// has a series of, whoever holds it: gpulens_gpu_info alone, where every
// allocation series is beside a GPU's. What reads every sample to learn
// which clusters report (query.ClusterValues) reads half as many as with
// Identifying's.
func (Schema) Present() []string { return []string{GPUInfo} }

// Identifying implements signals.Schema.
func (Schema) Identifying() []string {
	return []string{ContainerGPUAllocationRatio, GPUInfo}
}

func by(labels []string) string { return signals.By(labels...) }

var itoa = signals.Itoa
