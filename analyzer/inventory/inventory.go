package inventory

import (
	"time"

	"github.com/gpulens/gpulens/vocab"
)

// Inventory is a point-in-time view of the cluster.
type Inventory struct {
	// Available is false when no cluster could be reached; every other
	// field is then empty and Skipped explains what that costs.
	Available bool
	ReadAt    time.Time
	// Skipped lists what could not be read (no access, RBAC denied), in
	// words, e.g. "resourcequotas: forbidden".
	Skipped []string

	Pods       map[PodKey]Pod
	Namespaces map[string]Namespace
	Nodes      map[string]Node
	// Quotas holds, per namespace, the GPU limits of its ResourceQuotas.
	Quotas map[string][]Quota
	// Kueue holds Kueue's queues; nil where Kueue is not installed.
	Kueue *Kueue
	// PDBs per namespace.
	PDBs            map[string][]PDB
	PriorityClasses map[string]int32
	// Sharing is the device plugin's sharing configuration, per config
	// name: the ConfigMap data key, which the node label
	// nvidia.com/device-plugin.config selects (see SharingFor).
	Sharing map[string]SharingConfig
	// ClaimTemplates and Claims are the ResourceClaimTemplates and
	// ResourceClaims (resource.k8s.io/v1) through which pods get devices
	// by Dynamic Resource Allocation; ClaimsOf reads them per workload.
	ClaimTemplates map[ClaimKey]ClaimSpec
	Claims         map[ClaimKey]ResourceClaim
	// ClaimUsers are, per ResourceClaim, the pods not yet finished whose
	// spec names it, unsorted: several share its devices.
	ClaimUsers map[ClaimKey][]string
}

// PodKey identifies a pod.
type PodKey struct{ Namespace, Name string }

// Pod is a pod and the workload that owns it.
type Pod struct {
	PodKey
	UID  string
	Node string
	// Phase is Pending, Running, Succeeded, Failed or Unknown.
	Phase string
	// Workload is the top owner: ReplicaSet→Deployment, Job→CronJob,
	// StatefulSet, DaemonSet, or the pod itself when unowned.
	WorkloadKind string // Deployment, StatefulSet, DaemonSet, CronJob, Job, ReplicaSet, Pod
	WorkloadName string
	// WorkloadInferred is true when the top owner was derived from names
	// (pod-template-hash, CronJob job naming) because the intermediate
	// owner could not be read.
	WorkloadInferred bool
	// GPURequests are the pod's limits on GPU resources, by resource name
	// (nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-1g.10gb).
	GPURequests map[vocab.Resource]int64
	// GPUContainer is the one app container of the pod spec whose
	// resources hold a GPU, the container a patch of its GPU request
	// names; empty where none or several do.
	GPUContainer string
	// Claims are the pod's spec.resourceClaims: devices it gets by Dynamic
	// Resource Allocation (ClaimsOf says which are GPUs).
	Claims        []PodClaim
	PriorityClass string
	Labels        map[string]string
}

// Namespace carries the team a namespace belongs to (--team-label).
type Namespace struct {
	Name   string
	Team   string // value of the team label; "" when unlabelled
	Labels map[string]string
}

// Node is a node with its GPU Feature Discovery facts.
type Node struct {
	Name string
	// GPU Feature Discovery labels.
	Product         string        // nvidia.com/gpu.product
	MemoryMiB       int64         // nvidia.com/gpu.memory
	Count           int           // nvidia.com/gpu.count
	Replicas        int           // nvidia.com/gpu.replicas
	SharingStrategy vocab.Sharing // nvidia.com/gpu.sharing-strategy: none, time-slicing, mps
	MIGStrategy     string        // nvidia.com/mig.strategy: none, single, mixed
	DevicePluginCfg string        // nvidia.com/device-plugin.config
	// Capacity and Allocatable of GPU resources, by resource name.
	Capacity    map[vocab.Resource]int64
	Allocatable map[vocab.Resource]int64
	Taints      []Taint
	// NodePool is the cloud node-pool label when present (GKE, EKS, AKS,
	// Karpenter), for grouping; "" otherwise.
	NodePool string
	Labels   map[string]string
}

// Taint is a node taint.
type Taint struct{ Key, Value, Effect string }

// Quota is the GPU part of a ResourceQuota.
type Quota struct {
	Name string
	// Hard limits on GPU resources, keyed as in the quota
	// (requests.nvidia.com/gpu, limits.nvidia.com/gpu, ...).
	Hard map[string]int64
	// Used is the quota controller's last count for the same keys.
	Used map[string]int64
}

// PDB is a PodDisruptionBudget.
type PDB struct {
	Name string
	// Selector is spec.selector.matchLabels; MatchExpressions completes it.
	// Use Matches rather than comparing labels by hand.
	Selector         map[string]string
	MatchExpressions []LabelSelectorRequirement
	// InvalidSelector says the API's own parse of the selector failed
	// (a key or value that is no label): the disruption controller then
	// ignores the budget, and Matches matches nothing.
	InvalidSelector bool `json:",omitempty"`
	// NoSelector is true when spec.selector is unset: in policy/v1 such a
	// budget selects no pods, whereas an empty selector selects them all.
	NoSelector     bool
	MinAvailable   string
	MaxUnavailable string
	// DisruptionsAllowed is the controller's current verdict: 0 means an
	// eviction (e.g. moving a pod to a smaller GPU) would be refused now.
	DisruptionsAllowed int32
}

// SharingConfig is one device plugin sharing configuration.
type SharingConfig struct {
	// TimeSlicing or MPS replicas per resource name.
	TimeSlicing     map[vocab.Resource]int
	MPS             map[vocab.Resource]int
	RenameByDefault bool
	FailRequestsGT1 bool
	// MIGStrategy is flags.migStrategy when the config sets it.
	MIGStrategy string
	// Source is the ConfigMap ("namespace/name") the config was read from.
	Source string
}
