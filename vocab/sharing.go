package vocab

// Values of the sharing label: how a physical GPU is divided between
// containers, as gpulens-exporter writes it and every schema's
// allocations read. The exporter, the simulator, the schemas, the
// analysis and the planner name these; none spells them again.
const (
	SharingNone        = "none"
	SharingTimeSlicing = "time-slicing"
	SharingMPS         = "mps"
	SharingMIG         = "mig"
)

// Allocation paths: how a container was given its GPU. The kubelet
// hands out a device plugin's resource (nvidia.com/gpu,
// nvidia.com/mig-1g.10gb, ...) from the pod's resource limits, or a
// device a Dynamic Resource Allocation driver (gpu.nvidia.com) allocated
// to one of the pod's ResourceClaims. Which one decides how a GPU is
// reconfigured: device plugin and MIG manager node labels, or the claim's
// DeviceClass and selectors, which node labels do not touch.
const (
	AllocationPathDevicePlugin = "device-plugin"
	AllocationPathDRA          = "dra"
)
