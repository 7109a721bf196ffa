package inventory

import (
	"fmt"
	"maps"
	"slices"

	"github.com/gpulens/gpulens/vocab"
)

// SharingFor returns the sharing config a node's device plugin runs with.
// A node labelled nvidia.com/device-plugin.config gets that config. An
// unlabelled node gets the ClusterPolicy's default config, which the
// inventory does not read (it is a GPU Operator custom resource); it is
// assumed to be the only config when there is exactly one, as in the
// GPU Operator's documented setup ("any"), unless GFD reports the node as
// not shared. ok is false otherwise: the node's GFD labels (Replicas,
// SharingStrategy) are then the only evidence.
func (inv *Inventory) SharingFor(n Node) (SharingConfig, bool) {
	if inv == nil {
		return SharingConfig{}, false
	}
	if n.DevicePluginCfg != "" {
		sc, ok := inv.Sharing[n.DevicePluginCfg]
		return sc, ok
	}
	if len(inv.Sharing) != 1 || n.SharingStrategy == vocab.SharingNone {
		return SharingConfig{}, false
	}
	for _, sc := range inv.Sharing {
		return sc, true
	}
	return SharingConfig{}, false
}

// NodeSharing is how the cluster says a node's whole (non-MIG) GPUs are
// shared.
type NodeSharing struct {
	// Strategy is vocab.SharingTimeSlicing or vocab.SharingMPS.
	Strategy vocab.Sharing
	// Replicas is each GPU's replica count; 0 when not known.
	Replicas int
	// Source says where the strategy was read, in words, for findings.
	Source string
}

// SharedGPUs says whether the node's whole GPUs are time-sliced or MPS,
// and ok false when the cluster says they are not shared or does not
// say. GFD's labels are what the node's device plugin runs with, so they
// win: the strategy label (GFD from v0.15 on), then a replicas label
// above 1 alone (earlier GFD, which had only time-slicing). Without
// them, the node's device plugin config (SharingFor) decides, from its
// replicas of a full-GPU resource.
func (inv *Inventory) SharedGPUs(node string) (NodeSharing, bool) {
	if inv == nil || !inv.Available {
		return NodeSharing{}, false
	}
	n, ok := inv.Nodes[node]
	if !ok {
		return NodeSharing{}, false
	}
	switch n.SharingStrategy {
	case vocab.SharingTimeSlicing, vocab.SharingMPS:
		return NodeSharing{Strategy: n.SharingStrategy, Replicas: n.Replicas,
			Source: fmt.Sprintf("node %s's label %s=%s", n.Name, LabelSharingStrategy, n.SharingStrategy)}, true
	case vocab.SharingNone:
		return NodeSharing{}, false
	}
	if n.Replicas > 1 {
		return NodeSharing{Strategy: vocab.SharingTimeSlicing, Replicas: n.Replicas,
			Source: fmt.Sprintf("node %s's label %s=%d", n.Name, LabelGPUReplicas, n.Replicas)}, true
	}
	sc, ok := inv.SharingFor(n)
	if !ok {
		return NodeSharing{}, false
	}
	for _, s := range []struct {
		strategy vocab.Sharing
		replicas map[vocab.Resource]int
	}{{vocab.SharingMPS, sc.MPS}, {vocab.SharingTimeSlicing, sc.TimeSlicing}} {
		if r := wholeGPUReplicas(s.replicas); r > 1 {
			return NodeSharing{Strategy: s.strategy, Replicas: r,
				Source: fmt.Sprintf("the device plugin config in %s", sc.Source)}, true
		}
	}
	return NodeSharing{}, false
}

// wholeGPUReplicas is the replica count of a full-GPU resource
// (nvidia.com/gpu, or a renamed one such as nvidia.com/gpu.shared), not of
// a MIG resource (nvidia.com/mig-1g.10gb).
func wholeGPUReplicas(replicas map[vocab.Resource]int) int {
	out := 0
	for _, name := range slices.Sorted(maps.Keys(replicas)) {
		if !name.IsMIG() {
			out = max(out, replicas[name])
		}
	}
	return out
}
