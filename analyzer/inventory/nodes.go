package inventory

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/vocab"
	corev1 "k8s.io/api/core/v1"
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

// nodePoolLabels name the node pool on GKE, EKS managed node groups, AKS
// and Karpenter. The first one present wins, so that the result does not
// depend on map order should a node carry two.
var nodePoolLabels = []string{
	"cloud.google.com/gke-nodepool",
	"eks.amazonaws.com/nodegroup",
	"kubernetes.azure.com/agentpool",
	"karpenter.sh/nodepool",
}

func readNodes(ctx context.Context, r *reader) (func(), error) {
	nodes := map[string]Node{}
	err := eachItem(ctx, r.c.CoreV1().Nodes().List, func(n *corev1.Node) {
		nodes[n.Name] = nodeSummary(n)
	})
	return func() { r.inv.Nodes = nodes }, err
}

func nodeSummary(n *corev1.Node) Node {
	l := n.Labels
	node := Node{
		Name: n.Name,
		// With time-slicing and renameByDefault=false, GFD appends
		// "-SHARED" to the product; the model is what consumers match on.
		Product:         strings.TrimSuffix(l[LabelGPUProduct], "-SHARED"),
		MemoryMiB:       atoi64(l[LabelGPUMemory]),
		Count:           int(atoi64(l[LabelGPUCount])),
		Replicas:        int(atoi64(l[LabelGPUReplicas])),
		SharingStrategy: l[LabelSharingStrategy],
		MIGStrategy:     l[LabelMIGStrategy],
		DevicePluginCfg: l[LabelPluginConfig],
		Capacity:        gpuResources(n.Status.Capacity),
		Allocatable:     gpuResources(n.Status.Allocatable),
		NodePool:        nodePool(l),
		Labels:          l,
	}
	for _, t := range n.Spec.Taints {
		node.Taints = append(node.Taints, Taint{t.Key, t.Value, string(t.Effect)})
	}
	return node
}

func nodePool(labels map[string]string) string {
	for _, k := range nodePoolLabels {
		if v := labels[k]; v != "" {
			return v
		}
	}
	return ""
}

func gpuResources(list corev1.ResourceList) map[string]int64 {
	var out map[string]int64
	for name, q := range list {
		if !IsGPUResource(name) {
			continue
		}
		if out == nil {
			out = map[string]int64{}
		}
		out[string(name)] = q.Value()
	}
	return out
}

// atoi64 reads a numeric label; a missing or garbled label reads as 0,
// which every consumer treats as unknown.
func atoi64(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

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
func (n Node) HasTaint(key string, effect corev1.TaintEffect) bool {
	return slices.ContainsFunc(n.Taints, func(t Taint) bool { return t.Key == key && t.Effect == string(effect) })
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
