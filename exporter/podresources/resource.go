package podresources

import (
	"slices"

	"github.com/gpulens/gpulens/vocab"
)

// IsGPUResource reports whether name is a GPU resource: one of the NVIDIA
// device plugin's names (a MIG one only with a well-formed profile, since
// the profile becomes a label) or one of extra, the names an operator
// configured through a time-slicing "rename" that no naming rule can
// guess.
func IsGPUResource(name vocab.Resource, extra []vocab.Resource) bool {
	if name == vocab.ResourceGPU || name == vocab.ResourceGPUShared {
		return true
	}
	if _, ok := name.MIGProfile(); ok {
		return true
	}
	return slices.Contains(extra, name)
}
