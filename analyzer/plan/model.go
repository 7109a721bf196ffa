package plan

import (
	"strconv"

	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// Lane is one replica of a workload over the window: the allocations of
// its pods, one after another, that never overlapped in time. A Job whose
// pods run every night is one lane; a Deployment with three replicas is
// three. Lanes, not pods, are what the planner places: a place is held for
// the whole window, by whichever pod of the lane is running.
type Lane struct {
	Workload workload.Ref
	Replica  int
	Pods     []string
	// Training is set for training-like load: it saturated what it held,
	// and gets a GPU or a MIG slice to itself.
	Training bool
	// From is the GPU resource the lane's pods held.
	From string
	// Held is where its latest pod holds its GPU today, as From is how:
	// today's layout of the pool (today.go) is rebuilt from it.
	Held Holding
	// AllocationPath is how its latest pod was given the GPU:
	// device-plugin, or dra through Claims (namespace/name).
	AllocationPath vocab.AllocationPath
	Claims         []string
	// Mem is the device memory used at each step of the window, in
	// bytes; Load the part of the physical GPU busy for the lane (its
	// share × its utilization). Both are 0 where no pod of the lane ran.
	Mem  []float32
	Load []float32
	// GrowthBytes is the memory the lane is projected to add beyond its
	// peak over the planning horizon (a leak); the plan reserves it at
	// every step the lane runs.
	GrowthBytes float64

	stats laneStats
}

// Name is the workload with the replica, for tables.
func (l *Lane) Name() string {
	if l.Replica == 0 {
		return l.Workload.String()
	}
	return l.Workload.String() + "#" + strconv.Itoa(l.Replica)
}

// Holding is one allocation's place on today's fleet: the GPU (node and
// UUID), the MIG instance on a MIG GPU, and the allocation's sharing
// label and MIG profile. The zero value is a place not read.
type Holding struct {
	Node, UUID, Instance string
	Sharing              vocab.Sharing
	Profile              string
}

type laneStats struct {
	peakMem  float64 // of the planned memory (growth included)
	p99Mem   float64
	p95Load  float64
	peakLoad float64
	steps    int       // steps at which the lane ran
	run      []uint64  // which steps, as a bit set
	mem      []float32 // plannedMem at each step
	blocks   blockSummary
}

// running says whether a pod of the lane ran at step t.
func (l *Lane) running(t int) bool { return l.Mem[t] > 0 || l.Load[t] > 0 }

// plannedMem is the memory the plan reserves for the lane at step t.
func (l *Lane) plannedMem(t int) float32 {
	m := l.Mem[t]
	if l.GrowthBytes > 0 && (m > 0 || l.Load[t] > 0) {
		return float32(float64(m) + l.GrowthBytes)
	}
	return m
}

// Pool is one GPU model's share of the fleet: its GPUs today and the
// lanes that ran on them.
type Pool struct {
	// Product is the model label of the series; Model its catalog entry.
	Product string
	Model   Model
	// CapacityBytes is one GPU's device memory as the exporter measured
	// it (the catalog's nominal size when it did not).
	CapacityBytes float64
	GPUsToday     int
	// Nodes is how many nodes the GPUs are on, and GPUsPerNode how many
	// GPUs a node of the pool has; 0 when unknown.
	Nodes, GPUsPerNode int
	// InstanceType is the pool's nodes' node.kubernetes.io/instance-type
	// (the most common one); "" when unknown.
	InstanceType string
	Lanes        []*Lane

	// nodeGPUs is how many GPUs each node reported; nil when not read.
	nodeGPUs map[string]int
}

// Mode is how a planned GPU is used.
type Mode string

const (
	ModeWhole       Mode = "whole"
	ModeMIG         Mode = Mode(vocab.SharingMIG)
	ModeTimeSlicing Mode = Mode(vocab.SharingTimeSlicing)
	// ModeMPS is never planned: it is a GPU shared through MPS today, in a
	// pool that keeps today's layout (PoolPlan.KeepsToday).
	ModeMPS Mode = Mode(vocab.SharingMPS)
)

// Policy is the planner's headroom and limits.
type Policy struct {
	// MemoryMargin is kept free above the memory in use at every step on
	// shared GPUs and MIG slices: 0.2 needs 1.2 × the memory used.
	MemoryMargin float64 `json:"memory_margin"`
	// ComputeTarget is the load a shared GPU or a slice may carry at its
	// 95th percentile step.
	ComputeTarget float64 `json:"compute_target"`
	// MaxReplicas caps time-slicing replicas per GPU.
	MaxReplicas int `json:"max_replicas"`
	// ExactMaxLanes: pools with at most this many lanes are solved
	// exactly.
	ExactMaxLanes int `json:"exact_max_lanes"`
	// NoTimeSlicing plans whole GPUs and MIG slices only. Make tries it
	// beside the policy's own layout and keeps whichever needs fewer
	// nodes: time-sliced GPUs need nodes of their own, so on a pool of few
	// nodes sharing can cost a node where it saves GPUs.
	NoTimeSlicing bool `json:"no_time_slicing,omitempty"`
}

// DefaultPolicy matches the right-sizing defaults of recommend.
func DefaultPolicy() Policy {
	return Policy{MemoryMargin: 0.2, ComputeTarget: 0.8, MaxReplicas: 8, ExactMaxLanes: 10}
}

// loadQuantile is the share of steps a shared place's load must stay under
// ComputeTarget at: 95%, so the budget of steps above it is 5%.
const loadQuantile = 0.95

// path is the lane's allocation path, the device plugin's where none was
// read.
func (l *Lane) path() vocab.AllocationPath {
	if l.AllocationPath == "" {
		return vocab.AllocationPathDevicePlugin
	}
	return l.AllocationPath
}
