package vocab

// Sharing is a value of the sharing label: how a physical GPU is divided
// between containers, as gpulens-exporter writes it and every schema's
// allocations read. The exporter, the simulator, the schemas, the
// analysis and the planner name these; none spells them again. A label
// value read from a store is converted as it is (Sharing(v)), not
// checked: a value outside these passes through to the report unchanged.
type Sharing string

const (
	SharingNone        Sharing = "none"
	SharingTimeSlicing Sharing = "time-slicing"
	SharingMPS         Sharing = "mps"
	SharingMIG         Sharing = "mig"
	// SharingHAMi is Project-HAMi's sharing. gpulens-exporter never writes
	// it (HAMi's splits read as time-slicing's replicas there); HAMi's
	// findings and the simulator's scenarios name it.
	SharingHAMi Sharing = "hami"
)

// Allocation paths: how a container was given its GPU. The kubelet
// hands out a device plugin's resource (nvidia.com/gpu,
// nvidia.com/mig-1g.10gb, ...) from the pod's resource limits, or a
// device a Dynamic Resource Allocation driver (gpu.nvidia.com) allocated
// to one of the pod's ResourceClaims. Which one decides how a GPU is
// reconfigured: device plugin and MIG manager node labels, or the claim's
// DeviceClass and selectors, which node labels do not touch. Like
// Sharing, a label value read from a store is converted as it is.
type AllocationPath string

const (
	AllocationPathDevicePlugin AllocationPath = "device-plugin"
	AllocationPathDRA          AllocationPath = "dra"
)
