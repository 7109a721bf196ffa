package kube

import (
	"context"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/vocab"
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
	nodes := map[string]inventory.Node{}
	err := eachItem(ctx, r.c.CoreV1().Nodes().List, func(n *corev1.Node) {
		nodes[n.Name] = nodeSummary(n)
	})
	return func() { r.inv.Nodes = nodes }, err
}

func nodeSummary(n *corev1.Node) inventory.Node {
	l := n.Labels
	node := inventory.Node{
		Name: n.Name,
		// With time-slicing and renameByDefault=false, GFD appends
		// "-SHARED" to the product; the model is what consumers match on.
		Product:         strings.TrimSuffix(l[inventory.LabelGPUProduct], "-SHARED"),
		MemoryMiB:       atoi64(l[inventory.LabelGPUMemory]),
		Count:           int(atoi64(l[inventory.LabelGPUCount])),
		Replicas:        int(atoi64(l[inventory.LabelGPUReplicas])),
		SharingStrategy: vocab.Sharing(l[inventory.LabelSharingStrategy]),
		MIGStrategy:     l[inventory.LabelMIGStrategy],
		DevicePluginCfg: l[inventory.LabelPluginConfig],
		Capacity:        gpuResources(n.Status.Capacity),
		Allocatable:     gpuResources(n.Status.Allocatable),
		NodePool:        nodePool(l),
		Labels:          l,
	}
	for _, t := range n.Spec.Taints {
		node.Taints = append(node.Taints, inventory.Taint{Key: t.Key, Value: t.Value, Effect: string(t.Effect)})
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

func gpuResources(list corev1.ResourceList) map[vocab.Resource]int64 {
	var out map[vocab.Resource]int64
	for name, q := range list {
		r := vocab.Resource(name)
		if !r.IsGPU() {
			continue
		}
		if out == nil {
			out = map[vocab.Resource]int64{}
		}
		out[r] = q.Value()
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
