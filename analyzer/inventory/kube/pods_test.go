package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gpulens/gpulens/vocab"
)

func TestGPURequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	ctr := func(limits, requests corev1.ResourceList) corev1.Container {
		return corev1.Container{Resources: corev1.ResourceRequirements{Limits: limits, Requests: requests}}
	}
	gpus := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	sidecar := func(c corev1.Container) corev1.Container { c.RestartPolicy = &always; return c }

	tests := []struct {
		name string
		spec corev1.PodSpec
		want map[vocab.Resource]int64
	}{
		{"cpu only", corev1.PodSpec{Containers: []corev1.Container{ctr(gpus("cpu", "2", "memory", "1Gi"), nil)}}, nil},
		{"limit only", corev1.PodSpec{Containers: []corev1.Container{ctr(gpus("nvidia.com/gpu", "2"), nil)}},
			map[vocab.Resource]int64{"nvidia.com/gpu": 2}},
		{"request only", corev1.PodSpec{Containers: []corev1.Container{ctr(nil, gpus("nvidia.com/gpu", "1"))}},
			map[vocab.Resource]int64{"nvidia.com/gpu": 1}},
		{"limit and request", corev1.PodSpec{Containers: []corev1.Container{ctr(gpus("nvidia.com/gpu.shared", "1"), gpus("nvidia.com/gpu.shared", "1"))}},
			map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}},
		{"containers add up", corev1.PodSpec{Containers: []corev1.Container{
			ctr(gpus("nvidia.com/mig-1g.10gb", "1"), nil),
			ctr(gpus("nvidia.com/mig-1g.10gb", "1", "nvidia.com/mig-3g.40gb", "1"), nil),
		}}, map[vocab.Resource]int64{"nvidia.com/mig-1g.10gb": 2, "nvidia.com/mig-3g.40gb": 1}},
		{"other vendors and zero ignored", corev1.PodSpec{Containers: []corev1.Container{
			ctr(gpus("amd.com/gpu", "1", "nvidia.com/gpu", "0", "example.com/nvidia.com/gpu", "1"), nil),
		}}, nil},
		{"init container reuses devices", corev1.PodSpec{
			InitContainers: []corev1.Container{ctr(gpus("nvidia.com/gpu", "1"), nil)},
			Containers:     []corev1.Container{ctr(gpus("nvidia.com/gpu", "2"), nil)},
		}, map[vocab.Resource]int64{"nvidia.com/gpu": 2}},
		{"init container needs more than the app", corev1.PodSpec{
			InitContainers: []corev1.Container{ctr(gpus("nvidia.com/gpu", "4"), nil)},
			Containers:     []corev1.Container{ctr(gpus("nvidia.com/gpu", "1"), nil)},
		}, map[vocab.Resource]int64{"nvidia.com/gpu": 4}},
		{"sidecar adds to the app", corev1.PodSpec{
			InitContainers: []corev1.Container{sidecar(ctr(gpus("nvidia.com/gpu", "1"), nil))},
			Containers:     []corev1.Container{ctr(gpus("nvidia.com/gpu", "1"), nil)},
		}, map[vocab.Resource]int64{"nvidia.com/gpu": 2}},
		{"init after a sidecar runs beside it", corev1.PodSpec{
			InitContainers: []corev1.Container{
				sidecar(ctr(gpus("nvidia.com/gpu", "1"), nil)),
				ctr(gpus("nvidia.com/gpu", "2"), nil),
			},
			Containers: []corev1.Container{ctr(gpus("nvidia.com/gpu", "1"), nil)},
		}, map[vocab.Resource]int64{"nvidia.com/gpu": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, gpuRequests(&tt.spec)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestGPUContainer: the container a patch of the GPU request names, read
// from the pod spec where the metrics carry no container label; none
// where several app containers hold GPUs (which one a change is for is not
// in the spec) or only an init container does. Without it, at main
// 36bc8ff, a patch named a container "main" that the pod did not have.
func TestGPUContainer(t *testing.T) {
	named := func(name string, res corev1.ResourceList) corev1.Container {
		return corev1.Container{Name: name, Resources: corev1.ResourceRequirements{Limits: res}}
	}
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	cpu := corev1.ResourceList{"cpu": resource.MustParse("1")}
	for _, tt := range []struct {
		name string
		spec corev1.PodSpec
		want string
	}{
		{"the server beside a sidecar", corev1.PodSpec{Containers: []corev1.Container{named("envoy", cpu), named("server", gpu)}}, "server"},
		{"no GPU", corev1.PodSpec{Containers: []corev1.Container{named("web", cpu)}}, ""},
		{"two GPU containers", corev1.PodSpec{Containers: []corev1.Container{named("a", gpu), named("b", gpu)}}, ""},
		{"an init container's GPU", corev1.PodSpec{InitContainers: []corev1.Container{named("warm", gpu)}, Containers: []corev1.Container{named("web", cpu)}}, ""},
	} {
		if got := gpuContainer(&tt.spec); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
