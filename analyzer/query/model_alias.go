package query

import "github.com/gpulens/gpulens/analyzer/fleet"

// Transition aliases; removed once parallel branches land. The fleet
// model moved to analyzer/fleet (issue 43): new code names fleet.X.
type (
	Result          = fleet.Result
	AllocationKey   = fleet.AllocationKey
	Allocation      = fleet.Allocation
	WorkloadKey     = fleet.WorkloadKey
	Workload        = fleet.Workload
	GPUKey          = fleet.GPUKey
	GPU             = fleet.GPU
	XIDEvent        = fleet.XIDEvent
	XIDHolder       = fleet.XIDHolder
	Window          = fleet.Window
	Timeline        = fleet.Timeline
	NamespaceSeries = fleet.NamespaceSeries
	ClaimRef        = fleet.ClaimRef
	PodRef          = fleet.PodRef
	Owner           = fleet.Owner
	Clustered       = fleet.Clustered
)

// Transition aliases; removed once parallel branches land.
const (
	DefaultStep           = fleet.DefaultStep
	AttributionPerTenant  = fleet.AttributionPerTenant
	AttributionPerProcess = fleet.AttributionPerProcess
	AttributionCopies     = fleet.AttributionCopies
	AttributionOneTenant  = fleet.AttributionOneTenant
)

// Transition aliases; removed once parallel branches land.
var (
	MergeTimelines = fleet.MergeTimelines
	MergeClusters  = fleet.MergeClusters
	ClusterName    = fleet.ClusterName
)

type (
	Usage           = fleet.Usage
	AllocationUsage = fleet.AllocationUsage
	ShareRun        = fleet.ShareRun
)
