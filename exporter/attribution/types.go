package attribution

import (
	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/vocab"
)

// Input is everything one attribution pass reads. Nothing in it is modified.
type Input struct {
	// Node names the node the input describes. Attribution itself does not
	// need it; it keeps the input self-describing for callers and logs.
	Node     string
	Snapshot *gpu.Snapshot
	// Allocations is nil when the kubelet is unreachable: then nothing is
	// attributed at all, rather than attributing to pods that may be gone.
	Allocations *podresources.Allocations
	// Pods is nil without API access; finished and deleted pods can then not
	// be told apart from running ones, and processes not be attributed.
	Pods podindex.Index
	// Slices resolves the devices of ResourceClaims through the node's
	// ResourceSlices; nil when they are not read, and then every claim
	// device counts as unmatched.
	Slices sliceindex.Index
	// ProcRoot is the host's /proc (hostPID), or "" when per-process
	// attribution is off.
	ProcRoot string
	// SharedMode is what a replicated device (DeviceRef.Shared) is:
	// SharingTimeSlicing or SharingMPS. The device IDs of both look the
	// same, so it comes from GPU Feature Discovery's
	// nvidia.com/gpu.sharing-strategy node label or a flag. Anything else
	// means time-slicing.
	SharedMode vocab.Sharing
}

// Sharing says how a physical GPU is divided between containers: the
// sharing label's values (describe's).
const (
	SharingNone        = vocab.SharingNone
	SharingTimeSlicing = vocab.SharingTimeSlicing
	SharingMPS         = vocab.SharingMPS
	SharingMIG         = vocab.SharingMIG
)

// How a measured value was obtained; "" when it is gpu.NA.
const (
	// MethodDevice: the container holds the GPU or MIG instance alone, so
	// the device's own reading is the container's.
	MethodDevice = "device"
	// MethodMIGGPM: a MIG instance held alone, measured by its GPM SM
	// activity (Hopper and newer; A100 has no GPM).
	MethodMIGGPM = "mig-gpm"
	// MethodProcess: the sum over the container's own GPU processes.
	MethodProcess = "process"
)

// Modes of a pass.
const (
	// ModeProcess: processes on shared devices were attributed.
	ModeProcess = "process"
	// ModeAllocationOnly: no host /proc or no pod index, so containers on
	// shared devices get their allocation but no measured usage.
	ModeAllocationOnly = "allocation-only"
)

// ContainerGPU is one container's hold on one physical GPU or MIG instance.
type ContainerGPU struct {
	Namespace, Pod, Container string

	// GPU, UUID and Model identify the physical GPU, also for MIG.
	GPU   int
	UUID  string
	Model string

	Sharing vocab.Sharing // SharingNone, SharingTimeSlicing, SharingMPS or SharingMIG

	// GPUInstance is the MIG GPU instance ID, -1 outside MIG; MIGProfile and
	// MIGUUID are "" outside MIG.
	GPUInstance int
	MIGProfile  string
	MIGUUID     string

	// Resource is the extended resource the device was requested as, or
	// the DRA driver for a device allocated through a claim.
	Resource vocab.Resource
	// Claims are the ResourceClaims through which the container holds the
	// device, sorted; none for a device of a device plugin.
	Claims []Claim

	// Allocation is the share of the physical GPU held: 1 for a whole GPU,
	// 1/replicas for a shared replica, slices of the model's total (internal/mig) for a MIG instance. Shares
	// on one GPU sum to at most 1.
	Allocation float64

	// Utilization is how busy the container keeps its allocation, or gpu.NA
	// when not measurable; UtilizationMethod says how it was measured. It is
	// 0–1 for whole GPUs and MIG instances. On time-sliced and MPS GPUs it
	// may exceed 1 (up to 1/Allocation): time-slicing gives idle time away,
	// so a tenant can use more than its share while the others idle.
	Utilization       float64
	UtilizationMethod string

	// MemoryUsedBytes is the GPU memory the container uses, or gpu.NA.
	// Measured memory on one GPU sums to at most the GPU's used memory.
	MemoryUsedBytes float64
	MemoryMethod    string
}

// Claim is a ResourceClaim and the device of it that a container holds.
type Claim struct {
	Namespace, Name      string
	Driver, Pool, Device string
}

// Stats describes one pass, for self-metrics and logs.
type Stats struct {
	Mode string // ModeProcess or ModeAllocationOnly
	// UnmatchedDevices counts allocated device IDs that name no device of
	// the snapshot, or a MIG instance a down GPU no longer lists, and
	// claim devices that no ResourceSlice (yet) resolves to one.
	UnmatchedDevices int
	// UnattributedProcesses counts processes on shared devices that belong
	// to no container holding that device: host processes, pods using a GPU
	// they did not request, or processes of pods the index does not know yet.
	UnattributedProcesses int
	// ProcErrors counts processes whose cgroup could not be read or parsed.
	ProcErrors int
}
