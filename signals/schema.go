package signals

// AllocationKeyLabels identify one allocation: a container holding (a share of)
// one physical GPU, or one MIG instance of it.
var AllocationKeyLabels = []string{LabelNode, LabelNamespace, LabelPod, LabelContainer, LabelUUID, LabelGPUInstance}

// AllocationLabels are the labels of allocation series: the key plus
// attributes that are constant for an allocation.
var AllocationLabels = append(append([]string{}, AllocationKeyLabels...), LabelModel, LabelMIGProfile, LabelSharing)

// UsageLabels are the labels of usage series (utilization, memory): the
// allocation's without sharing, which only the allocation signal knows.
var UsageLabels = append(append([]string{}, AllocationKeyLabels...), LabelModel, LabelMIGProfile)

// ClaimLabels are the labels of the claims signal: the allocation's key,
// the ResourceClaim it was made through, and the driver, pool and device
// the claim was allocated.
var ClaimLabels = append(append([]string{}, AllocationKeyLabels...), LabelClaimNamespace, LabelClaim, LabelDriver, LabelPool, LabelDevice)

// GPUKey identifies a physical GPU; GPULabels adds its constant attributes.
var (
	GPUKey    = []string{LabelNode, LabelUUID}
	GPULabels = []string{LabelNode, LabelUUID, LabelModel}
)

// Schema turns logical signals into PromQL over one exporter's series.
type Schema interface {
	// Name is what --schema accepts: "native" or "dcgm-exporter".
	Name() string
	// Allocation has one series per allocation while it is held, with
	// AllocationLabels; the value is its share of the physical GPU, 0..1.
	Allocation() string
	// Utilization is how much of its own allocation each allocation used,
	// 0..1, with UsageLabels.
	Utilization() string
	// MemoryUsed is the device memory each allocation used, in bytes, with
	// UsageLabels.
	MemoryUsed() string
	// Claims has one series per allocation made through a Kubernetes
	// DRA ResourceClaim while it is held, value 1, with ClaimLabels. An
	// allocation with no series here came from a device plugin: the
	// allocation path is read from the data, never from the cluster.
	Claims() string
	// GPU has one series per physical GPU while it reports, value 1, with
	// GPULabels.
	GPU() string
	// GPUUtilization is the busy fraction of the whole physical GPU, 0..1,
	// with GPULabels; on MIG, the slices' activity weighted by their size.
	GPUUtilization() string
	// GPUMemoryTotal is the device memory of each physical GPU in bytes,
	// with GPULabels.
	GPUMemoryTotal() string
	// GPUMemoryUsed is the device memory in use on each physical GPU, in
	// bytes, with GPULabels: the device's own figure, whoever holds it, so
	// that out-of-memory risk never depends on attribution.
	GPUMemoryUsed() string
	// GPUEnergy is the energy each physical GPU used in the trailing range
	// rng, in joules, with GPULabels; step is the resolution a schema may
	// need for a subquery. Both are PromQL durations such as "1w" and "1m".
	// Counter resets, such as a driver reload, are handled by increase().
	GPUEnergy(rng, step string) string
	// GPUAttribution is, per GPU (GPUKey) that a tenant held in the
	// window o, how the tenants' series related to the device: the
	// highest Attribution code of the window, an instant expression.
	GPUAttribution(o Over) string
	// Health is the per-GPU health signals (lost, XID events, thermal
	// slowdown), whose semantics differ by exporter.
	Health(o Over) Health
	// Identifying lists the metric names whose presence means the data
	// came from this schema's exporter, in order of preference.
	Identifying() []string
	// In is the same schema with every expression in scope sc.
	In(sc Scope) Schema
	// Traits are what a reader needs to know of the exporter's series
	// beyond its expressions, so that no reader asks a schema's name.
	Traits() Traits
	// Device is the GPU's own readings, in the same scope.
	Device
}

// Traits are an exporter's properties that readers plan by (the shard
// planner, the analysis's host resolution), said by the schema instead of
// inferred from its name.
type Traits struct {
	// HostLabels are the raw labels a series carries its node in, first
	// non-empty wins, as the schema's expressions read them.
	HostLabels []string
	// TenantExact says every series the tenants' signals read carries its
	// tenant: a namespace matcher on each selector changes nothing but
	// which tenants an answer has. False where a tenant's figure reads
	// the device's own series (dcgm-exporter's utilization counts a GPU's
	// co-tenants across namespaces).
	TenantExact bool
	// PointsPerSeriesStep is the shard planner's cost model: the peak
	// samples of the heaviest query per probed GPU or allocation and per
	// step, with a margin (measured in analyzer/query's cost model test).
	PointsPerSeriesStep float64
	// HostPods, where not empty, is a regex of the exporter's own pod
	// names, which it may write as its host label when it has no node
	// name (dcgm-exporter without NODE_NAME): such a node is renamed to
	// the one kube-state-metrics places the pod on (ExporterPodNodes).
	HostPods string
}

// OptionalSignals is a schema whose exporter may be configured without
// some fields: Optional names, by signal, the metric names any one of
// which the signal needs. The analysis says which are missing.
type OptionalSignals interface {
	Optional() map[string][]string
}

// Device is what a GPU reports of itself beyond the analysis's signals:
// the dashboards' panels and the rules read these. Each is per physical
// GPU (GPULabels), or per MIG instance (GPULabels, gpu_instance and
// mig_profile) where named so, with the labels said.
type Device interface {
	// MIGUtilization is each MIG instance's busy fraction, 0..1.
	MIGUtilization() string
	// Profiling is a whole GPU's profiling ratio, 0..1: ProfSMActive,
	// ProfSMOccupancy, ProfTensorActive or ProfDRAMActive.
	Profiling(ratio string) string
	// MIGProfiling is the same ratio per MIG instance, of the instance.
	MIGProfiling(ratio string) string
	// MIGMemoryUsed and MIGMemoryTotal are per MIG instance, in bytes.
	MIGMemoryUsed() string
	MIGMemoryTotal() string
	// Power is the board's draw in watts.
	Power() string
	// Temperature is the GPU's, in degrees Celsius.
	Temperature() string
	// Clock is the SM and memory clocks in hertz, label clock (sm, memory).
	Clock() string
	// Throttle is 1 per GPU and active clocks-event reason that costs
	// performance, label reason (NVML's names: sw_power_cap, ...).
	Throttle() string
	// ThrottledBy is, per GPU, 1 while any of reasons (Throttle's names)
	// is active, else 0.
	ThrottledBy(reasons ...string) string
	// XIDEventsIn is the number of XID events in the trailing range rng,
	// label xid (the code, or "any" where the exporter cannot tell).
	XIDEventsIn(rng string) string
	// ECCUncorrectedIn is the uncorrectable ECC errors in rng.
	ECCUncorrectedIn(rng string) string
	// RemappedRows is the rows remapped, label type (correctable,
	// uncorrectable); RemapFailed is 1 where a remapping failed.
	RemappedRows() string
	RemapFailed() string
	// Note is a sentence for a reader of signal (a Prof* ratio,
	// NoteThrottle, NoteECC) where the exporter's default configuration
	// does not emit it; else "".
	Note(signal string) string
}

// Clocks-event reasons that cost performance, NVML's names.
const (
	ThrottleSWPowerCap           = "sw_power_cap"
	ThrottleHWSlowdown           = "hw_slowdown"
	ThrottleSWThermalSlowdown    = "sw_thermal_slowdown"
	ThrottleHWThermalSlowdown    = "hw_thermal_slowdown"
	ThrottleHWPowerBrakeSlowdown = "hw_power_brake_slowdown"
)

// Profiling ratios (Device.Profiling) and the notes' other signals.
const (
	ProfSMActive     = "sm_active"
	ProfSMOccupancy  = "sm_occupancy"
	ProfTensorActive = "tensor_active"
	ProfDRAMActive   = "dram_active"
	NoteThrottle     = "throttle"
	NoteECC          = "ecc"
)
