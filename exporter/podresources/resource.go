package podresources

import (
	"slices"
	"strings"

	"github.com/gpulens/gpulens/vocab"
)

// Resource names advertised by the NVIDIA device plugin.
const (
	// ResourceGPU is a whole GPU, a time-sliced or MPS replica when sharing is
	// configured without renaming, or a MIG device under the single strategy.
	ResourceGPU = vocab.ResourceGPU
	// ResourceGPUShared is what time-slicing advertises with renameByDefault.
	ResourceGPUShared = vocab.ResourceGPUShared

	// migResourcePrefix starts the per-profile resources of the mixed MIG
	// strategy, e.g. nvidia.com/mig-1g.10gb.
	migResourcePrefix = vocab.ResourceMIGPrefix
	// sharedSuffix is appended by renameByDefault to every shared resource,
	// MIG profiles included (nvidia.com/mig-1g.10gb.shared).
	sharedSuffix = ".shared"
)

// IsGPUResource reports whether name is a GPU resource: one of the NVIDIA
// device plugin's names or one of extra, the names an operator configured
// through a time-slicing "rename" that no naming rule can guess.
func IsGPUResource(name string, extra []string) bool {
	if name == ResourceGPU || name == ResourceGPUShared || MIGProfile(name) != "" {
		return true
	}
	return slices.Contains(extra, name)
}

// MIGProfile returns the MIG profile named by a mixed-strategy resource
// (nvidia.com/mig-1g.10gb and nvidia.com/mig-1g.10gb.shared give "1g.10gb"),
// or "" for any other resource. Under the single strategy the resource is
// nvidia.com/gpu and the profile has to come from NVML instead.
func MIGProfile(resource string) string {
	profile, ok := strings.CutPrefix(resource, migResourcePrefix)
	if !ok {
		return ""
	}
	profile = strings.TrimSuffix(profile, sharedSuffix)
	if !validProfile(profile) {
		return ""
	}
	return profile
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

// isSharedResource reports whether the resource name itself says the device
// is shared; renamed resources without the suffix only show it through
// replica IDs.
func isSharedResource(name string) bool {
	return strings.HasSuffix(name, sharedSuffix)
}
