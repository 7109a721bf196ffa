package fleet

import (
	"time"

	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// Result is one analysis of a window. Figures with no samples behind them
// are zero with a zero sample count next to them: unknown, not idle.
type Result struct {
	// Schema is the name of the schema the queries were built from.
	Schema string
	Window Window
	// QueryCount is the number of PromQL queries issued; it is the same for
	// every fleet size.
	QueryCount int
	// RawPasses is how many of those queries were passes read from the
	// store's raw samples (analyzer/scan) rather than evaluated by its
	// PromQL engine: zero where the store serves no raw reads.
	RawPasses int `json:",omitempty"`
	// Passes is how many of those queries were passes, read either way.
	Passes int `json:",omitempty"`
	// RawQueries is how many queries, passes or not, were answered from
	// raw samples.
	RawQueries int `json:",omitempty"`
	// Shards is how many parts the fleet was split into to keep each
	// query within the sample budget (AnalyzeSharded); 1 when unsplit.
	Shards int
	// ExpectedSteps is the number of subquery steps in the window, the
	// denominator of every Coverage.
	ExpectedSteps int
	Allocations   []Allocation
	// Workloads groups the allocations by the workload that owns their
	// pods and by allocation shape: the unit of every verdict.
	Workloads []Workload
	// PodOwners are the top owners kube-state-metrics recorded for the
	// pods that held GPUs (kube_pod_owner, climbed through
	// kube_replicaset_owner and kube_job_owner); nil when the store has
	// none.
	PodOwners map[PodRef]Owner
	GPUs      []GPU
	// HAMi are the tenants of the GPUs HAMi shares, from HAMi's own
	// series (query.ReadHAMi); nil where HAMi is not installed. Only the
	// analysis of a store of one cluster reads them.
	HAMi []HAMiTenant `json:",omitempty"`
	// Notes say where data is partial, in words for reports and logs.
	Notes []string
	// Missing are the schema's optional signals (signals.OptionalSignals)
	// whose fields have no series in the window, with those fields: a
	// stock GPU Operator install leaves some of dcgm-exporter's out.
	Missing map[string][]string `json:",omitempty"`
	// Timeline is each namespace's use over the window, where
	// Sharding.TimelinePoints asked for it and the passes ran.
	Timeline *Timeline `json:"-"`
	// Usage is each allocation's use at every step, for the
	// consolidation plan, where Sharding.Lanes asked for it and the
	// passes ran.
	Usage *Usage `json:"-"`
}

// AllocationKey identifies an allocation.
type AllocationKey struct {
	// Cluster is the value of the store's cluster label (ClusterValues);
	// empty where the store holds one cluster.
	Cluster                         string `json:",omitempty"`
	Node, Namespace, Pod, Container string
	// UUID is the physical GPU's.
	UUID string
	// GPUInstance is the MIG GPU instance ID; empty outside MIG.
	GPUInstance string
}

// Allocation is a container's hold on (a share of) one physical GPU.
type Allocation struct {
	AllocationKey
	// Workload and WorkloadKind are the engine's inference from the pod's
	// name (withWorkload); findings may correct them from the cluster.
	Workload, WorkloadKind string
	Model                  string
	MIGProfile             string
	// Sharing is none, time-slicing, mps or mig, as last seen.
	Sharing vocab.Sharing
	// Share is the allocation's share of the physical GPU as last seen.
	Share float64
	// AllocationPath is how the kubelet gave the container the GPU:
	// vocab.AllocationPathDevicePlugin, or vocab.AllocationPathDRA through the
	// ResourceClaim Claim (Kubernetes Dynamic Resource Allocation).
	AllocationPath vocab.AllocationPath
	Claim          ClaimRef `json:",omitzero"`

	// HeldHours is the time the allocation was seen.
	HeldHours float64
	// AllocatedGPUHours is share × time held, summed over the window.
	AllocatedGPUHours float64
	// Steps is the number of steps the allocation was seen; Coverage is
	// Steps over the window's steps.
	Steps    int
	Coverage float64
	// SinceLastSeen is the time from the last step the allocation was
	// seen at to the window's last step: 0 when it is held at the end of
	// the window (now, for a window ending now). A pod deleted within the
	// window (a rollout's old replica, a finished Job) has the time since;
	// without staleness markers (a backfill, federation) its series is
	// seen for the engine's lookback (5m) past its last sample.
	SinceLastSeen time.Duration `json:",omitzero"`

	// AvgUtilization and P95Utilization are of the allocation's own share,
	// 0..1, over the steps that had a utilization sample.
	AvgUtilization float64
	P95Utilization float64
	// UtilizationSteps is the number of steps with a utilization sample;
	// UtilizationCoverage is that over Steps.
	UtilizationSteps    int
	UtilizationCoverage float64
	// Hours are its hold and use hour by hour, where the analysis folded
	// hours (Sharding.Lanes); nil otherwise.
	Hours *AllocationHours `json:"-"`

	// PeakMemoryBytes and P99MemoryBytes are over the steps with a memory
	// sample (MemorySteps).
	PeakMemoryBytes float64
	P99MemoryBytes  float64
	MemorySteps     int
	// LastMemoryBytes is the last memory sample in the window, and
	// MemoryGrowthBytesPerHour the slope of a least-squares line through
	// all of them (deriv): with it, a leak can be projected forward.
	LastMemoryBytes          float64
	MemoryGrowthBytesPerHour float64

	// Restarts are its container's restarts in the window, by time, and
	// Terminated what kube-state-metrics said of its ends; none where the
	// store has no kube-state-metrics.
	Restarts   []Restart    `json:",omitempty"`
	Terminated *Termination `json:",omitempty"`
}

// WorkloadKey identifies a workload's allocations of one shape: the pods
// of one controller (inferred from their names), one container, on one
// GPU model and MIG profile. Replicas on several GPUs of the same shape are
// one workload; a workload on two models is two, since each is sized and
// priced on its own.
type WorkloadKey struct {
	workload.Ref
	Model, MIGProfile string
}

// Workload is every allocation of one WorkloadKey over the window, across
// pod generations (a rollout, a restarted Job) and replicas.
type Workload struct {
	WorkloadKey
	// Sharing, Share and AllocationPath are those of the allocation held
	// longest: a workload moved from the device plugin to a ResourceClaim
	// within the window is judged as it held its GPUs most.
	Sharing        vocab.Sharing
	Share          float64
	AllocationPath vocab.AllocationPath
	// Claims are the ResourceClaims its allocations were made through,
	// sorted: one per pod from a ResourceClaimTemplate, one for every pod
	// that shares a claim.
	Claims []ClaimRef `json:",omitempty"`
	// Pods are the pods seen, sorted; GPUs the physical GPUs they held.
	Pods []string
	GPUs []GPUKey
	// GPUInstance is the MIG GPU instance when every allocation was on
	// the same one (a single pod's slice); empty otherwise.
	GPUInstance string

	// Steps are the steps at which at least one of its allocations was
	// held: the union of its pods' time. Coverage is Steps over the
	// window's, HeldHours the same in hours.
	Steps     int
	Coverage  float64
	HeldHours float64
	// AllocationSteps sums the steps of every allocation; Replicas is that
	// over Steps, the average number held at once.
	AllocationSteps   int
	Replicas          float64
	AllocatedGPUHours float64

	// AvgUtilization is over every allocation's samples (pooled).
	// P95Utilization and P99MemoryBytes are over steps of the busiest
	// allocation at each step: what each replica must be sized for.
	AvgUtilization      float64
	P95Utilization      float64
	UtilizationSteps    int
	UtilizationCoverage float64
	PeakMemoryBytes     float64
	P99MemoryBytes      float64
	MemorySteps         int
}

// GPUKey identifies a physical GPU.
type GPUKey struct {
	// Cluster is as in AllocationKey: node names repeat across clusters.
	Cluster    string `json:",omitempty"`
	Node, UUID string
}

// GPU is one physical GPU.
type GPU struct {
	GPUKey
	Model string
	// Sharing is the mode its allocations used for most of the window;
	// empty when it was never allocated.
	Sharing vocab.Sharing

	// ReportedHours is the time the GPU's exporter reported it;
	// AllocatedHours the part of it with at least one allocation, and
	// UnallocatedHours the rest. AllocatedGPUHours sums the allocations'
	// shares over time: below AllocatedHours when MIG slices or replicas
	// were left free.
	ReportedHours     float64
	AllocatedHours    float64
	UnallocatedHours  float64
	AllocatedGPUHours float64
	Steps             int
	Coverage          float64
	// SinceLastSeen is the time from the last step the GPU's exporter
	// was seen reporting it at to the window's last step, as
	// Allocation.SinceLastSeen is: 0 for a GPU reported at the end of
	// the window. A node whose GPUs all stopped before it (an exporter or
	// a Prometheus that stopped, a store read after its last sample) is
	// judged at its last sample, not at the window's end (Result.Stale).
	SinceLastSeen time.Duration `json:",omitzero"`
	// ReportedByHour is ReportedHours in each hour of the window's
	// HourGrid, where the analysis folded hours (Sharding.Lanes); nil
	// otherwise.
	ReportedByHour []float64 `json:"-"`

	// CoTenants is the peak number of allocations on the GPU at one step.
	CoTenants int
	// Attribution is how the exporter attributed the GPU to its tenants:
	// per-tenant (each tenant's own figures), per-process (the same, from
	// dcgm-exporter's per-process series), device-copies (every tenant
	// shows the device's) or one-tenant (at most one tenant visible); empty
	// when no tenant held it.
	Attribution string
	// Relabelled says the GPU's tenant series came with exported_* labels
	// (a ServiceMonitor with honorLabels: false).
	Relabelled bool

	// AvgUtilization is of the whole GPU, over UtilizationSteps steps.
	AvgUtilization   float64
	UtilizationSteps int
	MemoryTotalBytes float64
	// MemoryUsed* are the device's own used memory, whoever holds it:
	// p99 and peak over steps, the last sample, and the least-squares
	// slope (deriv) per hour. MemoryUsedSteps 0 means not reported.
	MemoryUsedP99Bytes           float64
	MemoryUsedPeakBytes          float64
	MemoryUsedLastBytes          float64
	MemoryUsedGrowthBytesPerHour float64
	MemoryUsedSteps              int
	// TenantsMemoryP99Bytes is the p99 over steps of the memory of the
	// allocations present at each step, summed: what the tenants used at
	// the same time, never a sum of peaks taken at different times.
	TenantsMemoryP99Bytes float64
	// EnergyJoules is the energy used in the window; counter resets (a
	// driver reload) are accounted for.
	EnergyJoules float64

	// DownSteps is the number of steps the GPU was lost or failing (native
	// gpulens_gpu_up 0; dcgm-exporter, which has no up signal: last XID
	// 79, fallen off the bus).
	DownSteps int
	// XIDErrors is the number of XID events in the window that point at
	// the GPU, and XIDCodes their codes. dcgm-exporter only exposes the
	// last code, so there an event is a change of it: two within one step
	// count as one, a lower bound.
	XIDErrors float64
	XIDCodes  []string
	// WorkloadXIDErrors and WorkloadXIDCodes are the events an application
	// causes (XID 13, 31, 43, 45; schema.ApplicationXID): the workload's
	// bug, not the GPU's fault.
	WorkloadXIDErrors float64
	WorkloadXIDCodes  []string
	// WorkloadXIDEvents are those events one by one, each at the step the
	// exporter's series first showed it (schema.Health.XIDRaised) with the
	// allocations that held the GPU then: who raised it, or, where several
	// held it, the candidates. Sorted by time. Several events within one
	// step are one here (WorkloadXIDErrors counts each natively).
	WorkloadXIDEvents []XIDEvent `json:",omitempty"`
	// ThermalThrottleRatio is the fraction of ThrottleSteps with a thermal
	// slowdown (hardware or software) active; ThrottleSteps 0 means the
	// throttle reasons were not reported: unknown, not cool.
	ThermalThrottleRatio float64
	ThrottleSteps        int
}

// XIDEvent is one application XID (schema.ApplicationXID) raised on a GPU.
type XIDEvent struct {
	// Time is the step at which the exporter's series first showed it: it
	// was raised within the step before.
	Time time.Time
	Code string
	// Holders are the allocations that held the GPU, or any of its MIG
	// instances, at that step, sorted; none when no pod held it. Neither
	// exporter's XID series names the process or the MIG instance that
	// raised it (NVML's XID event is the device's; dcgm-exporter repeats
	// the device's field on every instance and every co-tenant's copy), so
	// with several holders which one raised it is unknown.
	Holders []XIDHolder `json:",omitempty"`
}

// XIDHolder is an allocation of the event's GPU: its AllocationKey less
// the cluster, node and GPU, which are the GPU's.
type XIDHolder struct {
	Namespace, Pod, Container, GPUInstance string
}
