package inventory

import (
	"cmp"
	"slices"

	"github.com/gpulens/gpulens/vocab"
)

// GPU Feature Discovery and GPU Operator node labels, vocab's.
const (
	LabelGPUProduct      = vocab.LabelGPUProduct
	LabelGPUMemory       = vocab.LabelGPUMemory // MiB per GPU
	LabelGPUCount        = vocab.LabelGPUCount
	LabelGPUReplicas     = vocab.LabelGPUReplicas
	LabelSharingStrategy = vocab.LabelSharingStrategy
	LabelMIGStrategy     = vocab.LabelMIGStrategy
	LabelPluginConfig    = vocab.LabelPluginConfig
	LabelGPUPresent      = vocab.LabelGPUPresent
)

// HasGPUs reports whether the node advertises GPU resources or GFD has
// found a GPU on it. The label matters for nodes whose device plugin is
// not (yet) running: their capacity is zero, but they are GPU nodes.
func (n Node) HasGPUs() bool {
	for _, v := range n.Capacity {
		if v > 0 {
			return true
		}
	}
	return n.Labels[LabelGPUPresent] == "true"
}

// HasTaint reports whether the node carries a taint with this key and
// effect (any value).
func (n Node) HasTaint(key, effect string) bool {
	return slices.ContainsFunc(n.Taints, func(t Taint) bool { return t.Key == key && t.Effect == effect })
}

// GPUNodes returns the GPU nodes sorted by name.
func (inv *Inventory) GPUNodes() []Node {
	if inv == nil {
		return nil
	}
	var out []Node
	for _, n := range inv.Nodes {
		if n.HasGPUs() {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b Node) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
