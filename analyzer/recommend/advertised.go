package recommend

import (
	"slices"

	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// Advertises is the resource a node under s's config advertises in place
// of resource. The config gpulens writes (timeSlicingConfig) replicates
// nvidia.com/gpu with renameByDefault: true, and the device plugin then
// advertises the replicas as the name plus ".shared" and nvidia.com/gpu
// no more: NVIDIA/k8s-device-plugin api/config/v1/replicas.go,
// ReplicatedResources.UnmarshalJSON (Rename = Name.DefaultSharedRename()
// where renameByDefault and no rename is given), resources.go
// DefaultSharedRename, consts.go DefaultSharedResourceNameSuffix ".shared".
// Every other resource is not in the config and keeps its name.
func (s Sharing) Advertises(resource vocab.Resource) vocab.Resource {
	if resource == vocab.ResourceGPU {
		return resource.Shared()
	}
	return resource
}

// under is c for u on nodes under s's config: each resource c sets, and
// each one u holds that c leaves alone, is asked for by the name the
// config advertises, and the old name dropped; a pod asking for
// nvidia.com/gpu would otherwise wait for ever on a node that no longer
// has it.
func (s Sharing) under(c PatchChange, u Usage) PatchChange {
	out := PatchChange{Remove: slices.Clone(c.Remove), Env: c.Env}
	set := func(r vocab.Resource, n int64) {
		if out.Limits == nil {
			out.Limits = map[vocab.Resource]int64{}
		}
		out.Limits[s.Advertises(r)] = n
		if s.Advertises(r) != r && !slices.Contains(out.Remove, r) {
			out.Remove = append(out.Remove, r)
		}
	}
	for r, n := range c.Limits {
		set(r, n)
	}
	for _, r := range u.gpuResources() {
		if _, changed := c.Limits[r]; changed || slices.Contains(c.Remove, r) || s.Advertises(r) == r {
			continue
		}
		n := u.Resources[r]
		if n <= 0 {
			n = 1
		}
		set(r, n)
	}
	return out
}

// repatch replaces r's patch (or the words that stood for it) with c for
// w.
func (r *Recommendation) repatch(w workload.Ref, c PatchChange) {
	if r.ByHand != "" {
		by := r.ByHand
		r.Notes = slices.DeleteFunc(r.Notes, func(n string) bool { return n == by })
		r.ByHand = ""
	}
	r.patchOr(w, c)
}
