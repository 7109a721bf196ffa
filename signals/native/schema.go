package native

import (
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/vocab"
)

// SchemaName is the schema of gpulens's own exporter (docs/METRICS.md).
const SchemaName = vocab.SchemaNative

// Schema reads the gpulens exporter's series. They already carry the
// normalised labels; the aggregations only drop labels the analysis does
// not key on (method, gpu, pci_bus_id, ...) so that a change of measurement
// method does not split one allocation into two. Scope narrows every
// selector (see signals.Scope); the zero Schema reads every series.
type Schema struct{ Scope signals.Scope }

var _ signals.Schema = Schema{}

// Name implements signals.Schema.
func (Schema) Name() string { return SchemaName }

// Allocation implements signals.Schema.
func (s Schema) Allocation() string {
	return "max by " + s.by(signals.AllocationLabels) + " (" + unexport(s.tenant(ContainerGPUAllocationRatio), tenantLabels...) + ")"
}

// Utilization implements signals.Schema. A MIG slice that gpulens cannot measure
// (Ampere has no GPM, so NVML has no per-instance activity) takes
// dcgm-exporter's DCGM_FI_PROF_GR_ENGINE_ACTIVE of its GPU instance where
// dcgm-exporter is scraped into the same store: the instance's busy
// fraction, which is the slice's own. Joined on the node, GPU and GPU
// instance, so the tenant is always gpulens's.
func (s Schema) Utilization() string {
	own := "max by " + s.by(signals.UsageLabels) + " (" + unexport(s.tenant(ContainerGPUUtilizationRatio), tenantLabels...) + ")"
	migAllocs := "max by " + s.by(signals.UsageLabels) + " (" + unexport(s.tenant(ContainerGPUAllocationRatio, `sharing="mig"`), tenantLabels...) + ")"
	return own + " or (" + s.dcgmSliceActivity() + " + on (node, uuid, gpu_instance) group_right () 0 * " + migAllocs + ")"
}

// dcgmSliceActivity is dcgm-exporter's graphics-engine activity per MIG
// GPU instance, 0..1, by node, uuid and gpu_instance, in the same scope.
// dcgm-exporter's Hostname is the node, as for the DCGM schema.
func (s Schema) dcgmSliceActivity() string { return dcgm.Schema{Scope: s.Scope}.SliceActivity() }

// MemoryUsed implements signals.Schema.
func (s Schema) MemoryUsed() string {
	return "max by " + s.by(signals.UsageLabels) + " (" + unexport(s.tenant(ContainerGPUMemoryUsedBytes), tenantLabels...) + ")"
}

// GPU implements signals.Schema.
func (s Schema) GPU() string {
	return "max by " + s.by(signals.GPULabels) + " (" + s.sel(GPUInfo) + ")"
}

// GPUUtilization implements signals.Schema. NVML has no utilization.gpu in MIG
// mode, so MIG GPUs fall back to the slices' SM activity weighted by the
// compute slices each holds, of the GPU's total: as the exporter read it
// from NVML's profiles, else (an older exporter) the catalog's.
//
// Ampere MIG GPUs, which have no GPM, take their slices' activity from
// dcgm-exporter where it is scraped too (see Utilization).
func (s Schema) GPUUtilization() string {
	gpuMIG := func(m string) string { return s.sel(GPUInfo, `mig_mode!="false"`, m) }
	total := " / on (node, uuid, model) group_left () (max by " + s.by(signals.GPULabels) + " (" + s.sel(GPUMIGComputeSlices) + ") or " +
		signals.MIGTotal(gpuMIG, signals.LabelModel, s.Scope.Labels(signals.GPULabels...)...) + ")"
	slices := "max by " + s.by([]string{"node", "uuid", "model", "gpu_instance"}) + " (" + s.sel(MIGComputeSlices) + ")"
	return "max by " + s.by(signals.GPULabels) + " (" + s.sel(GPUUtilizationRatio) + ")" +
		" or sum by " + s.by(signals.GPULabels) + " (" + s.sel(MIGSMActiveRatio) + " * " + s.sel(MIGComputeSlices) + ")" + total +
		" or sum by " + s.by(signals.GPULabels) + " (" + s.dcgmSliceActivity() + " * on (node, uuid, gpu_instance) group_right () " + slices + ")" + total
}

// GPUMemoryTotal implements signals.Schema.
func (s Schema) GPUMemoryTotal() string {
	return "max by " + s.by(signals.GPULabels) + " (" + s.sel(GPUMemoryTotalBytes) + ")"
}

// GPUMemoryUsed implements signals.Schema.
func (s Schema) GPUMemoryUsed() string {
	return "max by " + s.by(signals.GPULabels) + " (" + s.sel(GPUMemoryUsedBytes) + ")"
}

// GPUEnergy implements signals.Schema.
func (s Schema) GPUEnergy(rng, _ string) string {
	return "max by " + s.by(signals.GPULabels) + " (increase(" + s.sel(GPUEnergyJoulesTotal) + "[" + rng + "]))"
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

// by groups by labels and the scope's Keep.
func (s Schema) by(labels []string) string { return s.Scope.By(labels...) }

// sel is metric's selector in the scope, with extra matchers.
func (s Schema) sel(metric string, extra ...string) string { return s.Scope.Selector(metric, extra...) }

// tenant is sel for a series a tenant holds, narrowed to the scope's
// namespace and pod. The exporter writes both labels itself; under a
// ServiceMonitor's honorLabels: false they are the exporter's own and
// the tenant's are in exported_*, which the filter reads first.
func (s Schema) tenant(metric string, extra ...string) string {
	if s.Scope.Namespace == "" && s.Scope.Pod == "" {
		return s.sel(metric, extra...)
	}
	return "(" + s.sel(metric, append(append([]string{signals.Exported(signals.LabelPod) + `!=""`}, extra...), s.Scope.TenantMatchers(signals.ExportedPrefix)...)...) +
		" or " + s.sel(metric, append(append([]string{signals.Exported(signals.LabelPod) + `=""`}, extra...), s.Scope.TenantMatchers("")...)...) + ")"
}

var itoa = signals.Itoa

// Traits implements signals.Schema. Every series carries its node (from
// the downward API: the exporter refuses to start without it) and its
// tenant. The planner's cost is 1.5 points per probed series and step
// measured on the bench fleet ("gpu utilization"), 1.3 on the demo fleet.
func (Schema) Traits() signals.Traits {
	return signals.Traits{HostLabels: []string{signals.LabelNode}, TenantExact: true, PointsPerSeriesStep: 1.75}
}
