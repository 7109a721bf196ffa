package sim

import (
	"time"

	"github.com/gpulens/gpulens/vocab"
)

// Scenario is a simulated fleet: nodes with GPUs, how each GPU is shared,
// which pods use them and how they load them. It is read from YAML
// (--sim.scenario) and is the single input of the simulator, the simulated
// kubelet and `gpulens demo`.
type Scenario struct {
	// Seed makes every run with the same scenario and the same sample times
	// produce the same values, UUIDs and PIDs.
	Seed  uint64 `yaml:"seed"`
	Nodes []Node `yaml:"nodes"`
	// HAMi is how the scenario's HAMi install exports its metrics, for
	// the GPUs shared with mode hami.
	HAMi HAMiInstall `yaml:"hami"`
}

// Node is one GPU node.
type Node struct {
	Name string `yaml:"name"`
	// System picks the go-nvml mock server: dgxa100, dgxa100-80gb, dgxh100,
	// dgxh200, dgxb200, or l4 (a go-nvml device config built here: go-nvml
	// ships no inference GPUs).
	System string `yaml:"system"`
	// GPUs is the device count; 0 means the system's default (8). Parse
	// fills in the default.
	GPUs int `yaml:"gpus"`
	// DRA allocates the node's GPUs through ResourceClaims of NVIDIA's DRA
	// driver (gpu.nvidia.com) rather than its device plugin: the kubelet
	// lists each pod's claim and device, no device-plugin resource is
	// advertised, and the driver publishes the GPUs and MIG devices in a
	// ResourceSlice. Time-slicing and MPS, which the device plugin
	// configures, do not apply; pods share a GPU by sharing a claim.
	DRA     bool      `yaml:"dra"`
	Sharing []Sharing `yaml:"sharing"`
	Pods    []Pod     `yaml:"pods"`
	Faults  []Fault   `yaml:"faults"`
}

// Sharing sets how a set of GPUs is shared. GPUs not listed are "none":
// one pod holds the whole GPU.
type Sharing struct {
	GPUs []int `yaml:"gpus"`
	// Mode is none, time-slicing, mps, mig or hami.
	Mode vocab.Sharing `yaml:"mode"`
	// Replicas is the time-slicing / MPS replica count (2..48); for
	// hami, HAMi's deviceSplitCount (default 10).
	Replicas int `yaml:"replicas"`
	// MIG is the geometry, one profile name per instance, e.g.
	// [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb]. Profiles must exist on the model.
	MIG []string `yaml:"mig"`
	// Rename advertises time-slicing replicas as nvidia.com/gpu.shared
	// (the device plugin's renameByDefault).
	Rename bool `yaml:"rename"`
	// MemoryScaling is, for hami, the node's deviceMemoryScaling (HAMi's
	// per-node config; 0 means HAMi's default, 1): HAMi's device plugin
	// registers each GPU's memory times it (register.go), and the
	// scheduler's device memory series say that size. The exporter still
	// reads the device's own memory.
	MemoryScaling float64 `yaml:"deviceMemoryScaling"`
}

// Pod is a single-container pod holding one GPU, one MIG instance or one
// replica of a shared GPU.
type Pod struct {
	Namespace string `yaml:"namespace"`
	Name      string `yaml:"name"`
	Container string `yaml:"container"` // default "main", filled in by Parse
	GPU       int    `yaml:"gpu"`       // device index on the node
	// Instance is the index into the GPU's MIG geometry; it must be unset
	// on GPUs without MIG.
	Instance int `yaml:"instance"`
	// Claim names the pod's ResourceClaim on a DRA node; default
	// <name>-gpu, the pod's own claim. Pods of one namespace that name the
	// same claim share its GPU or MIG instance, and may run on it at once.
	Claim string `yaml:"claim"`
	// Load is the workload model: training, inference, notebook, batch, leak.
	Load string `yaml:"load"`
	// Utilization is the model's characteristic SM ratio (0..1): the plateau
	// of training, the daily peak of inference, the burst height of batch
	// and notebook, the mean of leak. 0 means the profile's default.
	Utilization float64 `yaml:"utilization"`
	// Memory is the steady peak (or, for leak, initial) memory, e.g.
	// "20GiB". Required.
	Memory ByteSize `yaml:"memory"`
	// Growth is how much memory a leak adds per hour, e.g. "1GiB". Only
	// for leak, where it is required. When the leak reaches the memory its
	// GPU or instance has left, the process dies of OOM and restarts.
	Growth ByteSize `yaml:"growth"`
	// Start and End bound the pod's life as offsets from the scenario start;
	// End 0 means it runs to the end.
	Start Duration `yaml:"start"`
	End   Duration `yaml:"end"`
	// Processes is how many host processes the container runs on its GPU
	// (e.g. a data-parallel launcher with workers); 0 means 1. The pod's
	// load and memory are split evenly between them.
	Processes int `yaml:"processes"`
	// HAMi are the pod's HAMi resources, on a GPU shared with mode hami.
	HAMi HAMiLimits `yaml:"hami"`
	// New marks a pod that arrived in the simulated window: it is absent
	// from the window before it (Previous), which a report compares with.
	New bool `yaml:"new"`
	// PreviousUtilization is the pod's Utilization in the window before
	// (Previous); 0 means the same as in the window.
	PreviousUtilization float64 `yaml:"previous_utilization"`
}

// Fault injects a failure on one GPU from an offset on. lost and hang hold
// from At on (At 0: from the start); an xid event is raised by the first
// Advance at or past At.
type Fault struct {
	GPU int `yaml:"gpu"`
	// Kind is lost (NVML_ERROR_GPU_IS_LOST), hang (calls block) or xid (one
	// XID event of code XID at At; XID 79 also loses the GPU).
	Kind string   `yaml:"kind"`
	At   Duration `yaml:"at"`
	XID  uint64   `yaml:"xid"`
}

// ByteSize is a YAML byte count written with a unit: 512MiB, 20GiB, 1.5GiB, 1000000.
type ByteSize uint64

// Duration is a YAML duration: 90s, 30m, 6h, 2d, 1d12h.
type Duration time.Duration

// Sharing modes (Sharing.Mode): the sharing label's values (describe's; imported
// as labels, since describe is a function here),
// which the simulated exporter writes as they are.
const (
	ModeNone        = vocab.SharingNone
	ModeTimeSlicing = vocab.SharingTimeSlicing
	ModeMPS         = vocab.SharingMPS
	ModeMIG         = vocab.SharingMIG
	// ModeHAMi is Project-HAMi's sharing: the node's exporter sees the GPU
	// time-sliced between its tenants (HAMi's device plugin hands out
	// "<UUID>-<n>" device IDs, one per split, as time-slicing hands out
	// replicas), each tenant limited by HAMi-core to its nvidia.com/gpumem
	// and nvidia.com/gpucores; HAMi's own series say so (fleet.HAMiSink).
	ModeHAMi = vocab.SharingHAMi
)

// Load profiles (Pod.Load).
const (
	LoadTraining  = "training"
	LoadInference = "inference"
	LoadNotebook  = "notebook"
	LoadBatch     = "batch"
	LoadLeak      = "leak"
)

// Fault kinds (Fault.Kind).
const (
	FaultLost = "lost"
	FaultHang = "hang"
	FaultXID  = "xid"
)

// XIDFallenOffBus is the XID after which the GPU is gone until reset.
const XIDFallenOffBus = 79
