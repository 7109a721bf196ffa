package recommend

import (
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// Action names what a Recommendation changes.
type Action string

// Actions.
const (
	ActionMIGProfile     Action = "use-mig-profile"
	ActionTimeSlicing    Action = "use-time-slicing"
	ActionDedicatedGPU   Action = "use-dedicated-gpu"
	ActionFewerReplicas  Action = "reduce-replicas"
	ActionMPSMemoryLimit Action = "set-mps-memory-limit"
	// ActionClaimPerPod gives each pod of a ResourceClaim several pods
	// share a claim of its own, from a ResourceClaimTemplate.
	ActionClaimPerPod Action = "use-claim-per-pod"
	// ActionScaleDown lets the node pool's autoscaler remove capacity
	// nobody holds; there is no workload to patch.
	ActionScaleDown Action = "scale-down-node-pool"
	// ActionRelease gives back an allocation that is idle and already the
	// smallest it can be: scale the workload to zero or delete the pod.
	ActionRelease Action = "release-allocation"
	// ActionConsolidate moves pods so that a node empties, where free GPUs
	// sit on nodes whose other GPUs are held: the autoscaler removes empty
	// nodes only. 'gpulens plan' gives the layout.
	ActionConsolidate Action = "consolidate-nodes"
)

// Recommendation is one change with its reason and effect.
type Recommendation struct {
	Action Action
	// Summary says what to do and why, in one sentence with the numbers.
	Summary  string
	Workload workload.Ref
	// From and To are the GPU resource names before and after, e.g.
	// nvidia.com/gpu and nvidia.com/mig-1g.10gb; equal when only the
	// sharing config changes.
	From, To string
	// CurrentShare and RecommendedShare are of one physical GPU; the
	// savings are (current − recommended) × price × 730 h.
	CurrentShare, RecommendedShare float64
	// Reliability marks a change that costs more (negative savings): it
	// buys headroom, not money.
	Reliability bool
	// Allocation is the allocation path the change is made on:
	// vocab.AllocationPathDevicePlugin (the container's GPU limits) or
	// AllocationPathDRA (the workload's ResourceClaim); empty when the
	// change touches no GPU request (release, scale down).
	Allocation vocab.AllocationPath
	// Claim is, through DRA, the object the GPU comes from
	// ("ResourceClaimTemplate ns/name", "ResourceClaim ns/name").
	Claim string
	// ClaimTemplate is, through DRA, the ResourceClaimTemplate to create
	// before Patch is applied: a template's spec is immutable, so the
	// change is a new template that the pod template is pointed at.
	ClaimTemplate *Manifest
	// Patch is the strategic-merge patch for the workload; nil when the
	// change is to the device plugin only, or cannot be made by a patch
	// (a named ResourceClaim: Notes say what to do; a container not in
	// the data: ByHand does).
	Patch *Patch
	// ByHand is, where the change is a container's and the data does not
	// say which container holds the GPU, the field to change, in words
	// (ContainerUnknown); it is one of Notes too. Empty otherwise.
	ByHand string `json:",omitempty"`
	// DevicePluginConfig is the device plugin sharing config to roll out
	// (YAML), when the change needs one.
	DevicePluginConfig string
	// Sharing is DevicePluginConfig in data, for analyzer/manifest to
	// write as a ConfigMap; nil with it.
	Sharing *Sharing
	// Notes are prerequisites and alternatives, in words.
	Notes []string
}
