package vocab

import "strings"

// Resource is an extended resource's name as a pod requests it and the
// kubelet and a node's status report it: nvidia.com/gpu,
// nvidia.com/mig-1g.10gb, nvidia.com/gpumem. The NVIDIA device plugin
// builds the names from pieces (the MIG prefix and a profile, a ".shared"
// suffix under renameByDefault, names an operator renames in its config),
// so they are built and read apart here, not by string surgery where they
// are used. A name read from the kubelet or a node is converted as it is
// (Resource(name)), not checked; corev1.ResourceName and the kubelet's
// strings are converted at those edges.
type Resource string

// The NVIDIA device plugin's extended resources, as pods request them.
const (
	// ResourceGPU is a whole GPU (or, under the device plugin's
	// time-slicing or MPS config without renameByDefault, a replica).
	ResourceGPU Resource = "nvidia.com/gpu"
	// ResourceGPUShared is a replica of a time-sliced or MPS GPU where the
	// plugin renames shared resources (renameByDefault).
	ResourceGPUShared Resource = ResourceGPU + sharedSuffix
)

// ResourcePrefix starts every NVIDIA extended resource; a ResourceQuota's
// keys (requests.nvidia.com/gpu) hold it after their own prefix, which is
// why it is a plain string.
const ResourcePrefix = "nvidia.com/"

const (
	// migPrefix starts a MIG instance's resource under the mixed MIG
	// strategy: nvidia.com/mig-1g.10gb (NVIDIA/k8s-device-plugin
	// README.md, "Configuration Option Details", migStrategy mixed).
	migPrefix = ResourcePrefix + "mig-"
	// sharedSuffix is what renameByDefault appends to every shared
	// resource, MIG profiles included (nvidia.com/mig-1g.10gb.shared;
	// NVIDIA/k8s-device-plugin README.md, "With CUDA Time-Slicing").
	sharedSuffix = ".shared"
)

// MIGResource is a MIG profile's resource under the mixed strategy:
// "1g.10gb" gives nvidia.com/mig-1g.10gb.
func MIGResource(profile string) Resource { return Resource(migPrefix + profile) }

// String is the name as the Kubernetes API writes it.
func (r Resource) String() string { return string(r) }

// IsNVIDIA says whether the name is in NVIDIA's domain (nvidia.com/...),
// HAMi's resources included.
func (r Resource) IsNVIDIA() bool { return strings.HasPrefix(string(r), ResourcePrefix) }

// IsMIG says whether the name is a mixed-strategy MIG resource by its
// prefix alone, whatever follows it; MIGProfile also checks the profile.
func (r Resource) IsMIG() bool { return strings.HasPrefix(string(r), migPrefix) }

// IsGPU says whether the name is one of the device plugin's GPU names: a
// whole GPU, a renamed shared replica or a MIG instance (by its prefix).
// Names an operator renamed in the plugin's config are not known here.
func (r Resource) IsGPU() bool {
	return r == ResourceGPU || r == ResourceGPUShared || r.IsMIG()
}

// Shared is the name renameByDefault gives the resource's replicas:
// nvidia.com/gpu gives nvidia.com/gpu.shared. A shared name is returned
// as it is.
func (r Resource) Shared() Resource {
	if r.IsShared() {
		return r
	}
	return r + sharedSuffix
}

// IsShared says whether the name itself says the device is shared
// (renameByDefault's suffix); replicas under a name without it show as
// shared only through their device IDs.
func (r Resource) IsShared() bool { return strings.HasSuffix(string(r), sharedSuffix) }

// Unshared is the name without renameByDefault's suffix:
// nvidia.com/mig-1g.10gb.shared gives nvidia.com/mig-1g.10gb.
func (r Resource) Unshared() Resource { return Resource(strings.TrimSuffix(string(r), sharedSuffix)) }

// MIGProfile is the MIG profile a mixed-strategy resource names:
// nvidia.com/mig-1g.10gb and nvidia.com/mig-1g.10gb.shared give
// "1g.10gb", true. Any other name, or a profile not in the shape NVIDIA
// writes, gives "", false. Under the single strategy the resource is
// nvidia.com/gpu and the profile comes from NVML instead.
func (r Resource) MIGProfile() (string, bool) {
	p, ok := strings.CutPrefix(string(r.Unshared()), migPrefix)
	if !ok || !validProfile(p) {
		return "", false
	}
	return p, true
}

// validProfile accepts the shapes NVIDIA uses for GPU and compute instance
// profiles (1g.10gb, 1g.10gb+me, 1c.3g.20gb) without listing them, so new
// GPU generations need no code change.
func validProfile(p string) bool {
	if p == "" || p[0] < '0' || p[0] > '9' {
		return false
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && c != '.' && c != '+' {
			return false
		}
	}
	return true
}

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
	ResourceHAMiMemory           Resource = "nvidia.com/gpumem"
	ResourceHAMiMemoryPercentage Resource = "nvidia.com/gpumem-percentage"
	ResourceHAMiCores            Resource = "nvidia.com/gpucores"
)
