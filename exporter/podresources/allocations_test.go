package podresources

import (
	"testing"
	"time"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpulens/gpulens/vocab"
)

func TestBuildAllocationsNilAnswers(t *testing.T) {
	a, errs := buildAllocations(time.Unix(0, 0), nil, nil, Selection{})
	if len(errs) != 0 || len(a.Pods) != 0 || len(a.Allocatable) != 0 {
		t.Fatalf("nil answers gave %d pods, %d allocatable, errors %v", len(a.Pods), len(a.Allocatable), errs)
	}
	if _, ok := a.Pod("default", "x"); ok {
		t.Error("Pod() found a pod in empty allocations")
	}
}

func TestAllocationsLookup(t *testing.T) {
	gpu := func(ids ...string) []*v1.ContainerDevices {
		return []*v1.ContainerDevices{{ResourceName: string(vocab.ResourceGPU), DeviceIds: ids}}
	}
	list := &v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{
		{Namespace: "b", Name: "p", Containers: []*v1.ContainerResources{
			{Name: "z", Devices: gpu(gpuUUID + "::1")},
			{Name: "a", Devices: gpu(gpuUUID + "::0")},
			{Name: "cpu-only"},
		}},
		{Namespace: "a", Name: "q", Containers: []*v1.ContainerResources{{Name: "c", Devices: gpu(migUUID)}}},
		{Namespace: "a", Name: "cpu", Containers: []*v1.ContainerResources{{Name: "c", CpuIds: []int64{1, 2}}}},
	}}
	alloc := &v1.AllocatableResourcesResponse{Devices: gpu(gpuUUID+"::0", gpuUUID+"::1", gpuUUID+"::2", migUUID)}
	a, errs := buildAllocations(time.Unix(0, 0), list, alloc, Selection{})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(a.Pods) != 2 || a.Pods[0].Namespace != "a" || a.Pods[1].Namespace != "b" {
		t.Fatalf("pods not filtered to GPU pods sorted by namespace: %+v", a.Pods)
	}
	p, ok := a.Pod("b", "p")
	if !ok {
		t.Fatal("Pod(b, p) not found")
	}
	if len(p.Containers) != 2 || p.Containers[0].Name != "a" || p.Containers[1].Name != "z" {
		t.Fatalf("containers of b/p = %+v, want a and z only, sorted", p.Containers)
	}
	if _, ok := a.Pod("a", "cpu"); ok {
		t.Error("pod without GPUs kept")
	}
	tests := []struct {
		id   string
		want int
	}{
		{gpuUUID + "::1", 3},
		{migUUID, 1},
		{"GPU-00000000-0000-0000-0000-000000000000::0", 0},
		{"GPU-00000000-0000-0000-0000-000000000000", 1},
	}
	for _, tt := range tests {
		ref, err := ParseDeviceID(vocab.ResourceGPU, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Replicas(ref); got != tt.want {
			t.Errorf("Replicas(%s) = %d, want %d", tt.id, got, tt.want)
		}
	}
}
