package simkube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/gpulens/gpulens/exporter/sim"
)

// Cluster is the API server's view of one simulated node: a fake clientset
// holding the node (with GPU Feature Discovery labels) and its running
// pods, kept in step with the simulator by Sync.
type Cluster struct {
	Client *fake.Clientset
	node   string
	pods   map[string]sim.PodState // namespace/name -> state
}

// NewCluster registers the node described by n.
func NewCluster(ctx context.Context, n *sim.NodeSim) (*Cluster, error) {
	c := &Cluster{Client: fake.NewClientset(), node: n.Node().Name, pods: map[string]sim.PodState{}}
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, nodeObject(n), metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return c, nil
}

// SharingStrategy is what GPU Feature Discovery would label the node with
// (nvidia.com/gpu.sharing-strategy): mps when any GPU runs MPS, else
// time-slicing when any GPU is time-sliced, else none.
func SharingStrategy(devs []sim.DeviceInfo) string {
	strategy := "none"
	for _, d := range devs {
		switch d.Sharing {
		case sim.ModeMPS:
			return "mps"
		case sim.ModeTimeSlicing:
			strategy = "time-slicing"
		}
	}
	return strategy
}

func nodeObject(n *sim.NodeSim) *corev1.Node {
	devs := n.Devices()
	labels := map[string]string{
		"nvidia.com/gpu.present":          "true",
		"nvidia.com/gpu.count":            fmt.Sprint(len(devs)),
		"nvidia.com/gpu.sharing-strategy": SharingStrategy(devs),
		"nvidia.com/mig.strategy":         "mixed",
	}
	if len(devs) > 0 {
		labels["nvidia.com/gpu.product"] = sanitizeLabel(devs[0].Model)
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Node().Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Capacity: corev1.ResourceList{
			"nvidia.com/gpu": *resource.NewQuantity(int64(len(devs)), resource.DecimalSI),
		}},
	}
}

// sanitizeLabel turns "NVIDIA H100 80GB HBM3" into GFD's label form
// "NVIDIA-H100-80GB-HBM3".
func sanitizeLabel(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == ' ' {
			b[i] = '-'
		}
	}
	return string(b)
}

func podObject(node string, p sim.PodState) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: p.Namespace, Name: p.Name, UID: types.UID(p.UID),
			CreationTimestamp: metav1.NewTime(p.StartedAt),
		},
		Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{
				Name: p.Container,
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
					corev1.ResourceName(p.ResourceName): *resource.NewQuantity(1, resource.DecimalSI),
				}},
			}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: p.Container, ContainerID: "containerd://" + p.ContainerID, Ready: true,
				RestartCount: int32(p.Restarts),
			}},
		},
	}
}

// Sync creates the pods that started and deletes those that ended.
func (c *Cluster) Sync(ctx context.Context, pods []sim.PodState) error {
	live := map[string]bool{}
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		live[key] = true
		if old, ok := c.pods[key]; ok && old.UID == p.UID {
			continue
		}
		if _, err := c.Client.CoreV1().Pods(p.Namespace).Create(ctx, podObject(c.node, p), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("simulated API server: creating pod %s: %w", key, err)
		}
		c.pods[key] = p
	}
	for key, p := range c.pods {
		if !live[key] {
			if err := c.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
				return fmt.Errorf("simulated API server: deleting pod %s: %w", key, err)
			}
			delete(c.pods, key)
		}
	}
	return nil
}
