package vocab

// The NVIDIA device plugin's extended resources, as pods request them.
const (
	// ResourceGPU is a whole GPU (or, under the device plugin's
	// time-slicing or MPS config without renameByDefault, a replica).
	ResourceGPU = "nvidia.com/gpu"
	// ResourceGPUShared is a replica of a time-sliced or MPS GPU where the
	// plugin renames shared resources (renameByDefault).
	ResourceGPUShared = "nvidia.com/gpu.shared"
	// ResourceMIGPrefix starts a MIG instance's resource under the mixed
	// MIG strategy: nvidia.com/mig-1g.10gb.
	ResourceMIGPrefix = "nvidia.com/mig-"
	// ResourcePrefix starts every NVIDIA extended resource.
	ResourcePrefix = "nvidia.com/"
)

// The node labels of NVIDIA's GPU Feature Discovery and device plugin.
const (
	LabelGPUProduct      = "nvidia.com/gpu.product"
	LabelGPUMemory       = "nvidia.com/gpu.memory" // MiB per GPU
	LabelGPUCount        = "nvidia.com/gpu.count"
	LabelGPUReplicas     = "nvidia.com/gpu.replicas"
	LabelSharingStrategy = "nvidia.com/gpu.sharing-strategy"
	LabelMIGStrategy     = "nvidia.com/mig.strategy"
	LabelPluginConfig    = "nvidia.com/device-plugin.config"
	LabelGPUPresent      = "nvidia.com/gpu.present"
)

// Resource names of HAMi's NVIDIA device (pkg/scheduler/config/config.go:
// 300-304 at 4707fb02, charts/hami/values.yaml:25-28): the GPUs, the
// memory in MiB, the memory as a percentage of the device, and the cores
// in percent of the device's SMs. All four can be renamed in HAMi's
// chart; these are the defaults. HAMi's GPUs are the device plugin's
// name, ResourceGPU.
const (
	ResourceHAMiMemory           = "nvidia.com/gpumem"
	ResourceHAMiMemoryPercentage = "nvidia.com/gpumem-percentage"
	ResourceHAMiCores            = "nvidia.com/gpucores"
)
