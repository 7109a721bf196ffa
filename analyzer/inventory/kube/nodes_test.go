package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

func TestNodePool(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"GKE", map[string]string{"cloud.google.com/gke-nodepool": "l4-pool", "cloud.google.com/gke-accelerator": "nvidia-l4"}, "l4-pool"},
		{"EKS managed node group", map[string]string{"eks.amazonaws.com/nodegroup": "p5-training"}, "p5-training"},
		{"AKS", map[string]string{"kubernetes.azure.com/agentpool": "gpunp", "kubernetes.azure.com/accelerator": "nvidia"}, "gpunp"},
		{"Karpenter", map[string]string{"karpenter.sh/nodepool": "gpu-spot", "karpenter.sh/capacity-type": "spot"}, "gpu-spot"},
		{"first label wins", map[string]string{"karpenter.sh/nodepool": "k", "eks.amazonaws.com/nodegroup": "ng"}, "ng"},
		{"on premises", map[string]string{"kubernetes.io/hostname": "dgx-01"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := nodePool(tt.labels); got != tt.want {
				t.Errorf("nodePool = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNodeSummaryLabels(t *testing.T) {
	tests := []struct {
		name            string
		labels          map[string]string
		capacity        corev1.ResourceList
		product         string
		memory          int64
		count, replicas int
		hasGPUs         bool
	}{
		{"time-sliced without rename", map[string]string{
			inventory.LabelGPUProduct: "Tesla-T4-SHARED", inventory.LabelGPUMemory: "15360", inventory.LabelGPUCount: "4", inventory.LabelGPUReplicas: "8",
		}, corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("32")}, "Tesla-T4", 15360, 4, 8, true},
		{"garbled labels read as unknown", map[string]string{
			inventory.LabelGPUProduct: "NVIDIA-L40S", inventory.LabelGPUMemory: "46068MiB", inventory.LabelGPUCount: "-1", inventory.LabelGPUReplicas: "x",
		}, nil, "NVIDIA-L40S", 0, 0, 0, false},
		{"device plugin not running yet", map[string]string{inventory.LabelGPUPresent: "true"}, nil, "", 0, 0, 0, true},
		{"plugin gone, capacity zero", map[string]string{inventory.LabelGPUPresent: "false"},
			corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("0")}, "", 0, 0, 0, false},
		{"CPU node", nil, corev1.ResourceList{"cpu": resource.MustParse("8")}, "", 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := nodeSummary(&corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: tt.labels},
				Status:     corev1.NodeStatus{Capacity: tt.capacity},
			})
			if n.Product != tt.product || n.MemoryMiB != tt.memory || n.Count != tt.count || n.Replicas != tt.replicas {
				t.Errorf("got product %q memory %d count %d replicas %d", n.Product, n.MemoryMiB, n.Count, n.Replicas)
			}
			if n.HasGPUs() != tt.hasGPUs {
				t.Errorf("HasGPUs = %v, want %v", n.HasGPUs(), tt.hasGPUs)
			}
		})
	}
}
