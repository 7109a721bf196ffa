// Package findings turns one analysis (fleet.Result), optionally joined
// with the cluster's state (inventory), into findings: what wastes money,
// what is about to break, and what to change, each with its evidence,
// confidence and dollar impact.
package findings

import (
	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/vocab"
)

// Severity is info, warning or critical.
type Severity string

// Severities.
const (
	Info     Severity = "info"
	Warning  Severity = "warning"
	Critical Severity = "critical"
)

// Finding is one observation about an allocation, a GPU, a node or a
// namespace; the fields that do not apply are empty.
type Finding struct {
	// Cluster is the value of the store's cluster label the finding's
	// subject carries (query.ClusterValues); empty where the store holds
	// one cluster.
	Cluster                                                                              string `json:",omitempty"`
	Kind                                                                                 vocab.Kind
	Severity                                                                             Severity
	Namespace, Workload, WorkloadKind, Pod, Container, Node, GPUUUID, GPUInstance, Model string
	Team                                                                                 string
	// WorkloadSource says how Workload was found: SourceAPI or
	// SourcePodName. Pods and GPUs list every pod and GPU (UUID) the
	// workload's finding covers; Pod, Node and GPUUUID are set when there
	// was exactly one.
	WorkloadSource string   `json:",omitempty"`
	Pods           []string `json:",omitempty"`
	GPUs           []string `json:",omitempty"`
	// AllocationPath is how a workload's pods were given their GPUs, as
	// the exporter's series say: vocab.AllocationPathDevicePlugin, or
	// AllocationPathDRA through Claims (namespace/name, sorted). Empty on
	// findings about a GPU, a node or a namespace.
	AllocationPath vocab.AllocationPath `json:",omitempty"`
	Claims         []string             `json:",omitempty"`
	// Sharing is, on a finding about a shared GPU's memory, how it is
	// shared: time-slicing or mps (the device plugin's), or
	// SharingSharedClaim, one ResourceClaim several pods use.
	Sharing vocab.Sharing `json:",omitempty"`
	// Evidence are the numbers behind the finding, in base units.
	Evidence map[string]float64
	// Summary is one sentence with the numbers.
	Summary string
	// Confidence is how much of the window the evidence covers, 0..1.
	Confidence float64
	// MonthlyCostUSD is what the subject costs a month, and
	// MonthlySavingsUSD what the recommendation saves (negative when it
	// costs more); both are 0 with CostKnown false when there is no price.
	MonthlyCostUSD, MonthlySavingsUSD float64
	CostKnown                         bool
	Recommendation                    *recommend.Recommendation
}

// Result is what Detect found: the findings, and the kinds it could not check.
type Result struct {
	Findings []Finding
	// Skipped lists the kinds that could not be checked and why, e.g.
	// "untainted-gpu-node: needs cluster access".
	Skipped []string
	// WorkloadSources counts the workloads judged by how their owner was
	// found (SourceAPI, SourcePodName).
	WorkloadSources map[string]int
	Config          criteria.Config
	// unnamed are the GPUs used while no pod was seen on them
	// (UnnamedUseOf), for UsedWithoutPod.
	unnamed map[fleet.GPUKey]bool
}

// UsedWithoutPod says g was in use by a tenant the data cannot name
// while no allocation held it: that time is not free capacity, and the
// report counts it apart from unallocated waste.
func (r *Result) UsedWithoutPod(g fleet.GPUKey) bool { return r != nil && r.unnamed[g] }
