package inventory

import (
	"strings"

	"github.com/gpulens/gpulens/vocab"
)

// GPU resource names the device plugin advertises: whole GPUs, renamed
// time-sliced or MPS replicas, and MIG slices under the mixed strategy.
// Plain strings (a corev1.ResourceName is one), so that the model links no
// Kubernetes API types.
const (
	ResourceGPU       = vocab.ResourceGPU
	ResourceGPUShared = vocab.ResourceGPUShared
	resourceMIGPrefix = vocab.ResourceMIGPrefix
)

// IsGPUResource reports whether a resource name is an NVIDIA GPU, a shared
// replica of one or a MIG slice.
func IsGPUResource(name string) bool {
	return name == ResourceGPU || name == ResourceGPUShared || strings.HasPrefix(name, resourceMIGPrefix)
}
