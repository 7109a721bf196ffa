package podresources

import (
	"cmp"
	"slices"
	"time"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpulens/gpulens/vocab"
)

// Device is one GPU device ID the kubelet assigned or can assign.
type Device struct {
	// Resource is the extended resource name, e.g. nvidia.com/mig-1g.10gb.
	Resource vocab.Resource
	// Ref is the parsed device ID; Ref.String() is the ID the kubelet sent.
	Ref DeviceRef
}

// Container lists the GPU devices of one container: those of device
// plugins, and those allocated through ResourceClaims (DRA).
type Container struct {
	Name    string
	Devices []Device      // sorted by resource, then ID
	Claims  []ClaimDevice // sorted by claim, then driver, pool and device
}

// Pod lists the containers of one pod that hold GPU devices.
type Pod struct {
	Namespace  string
	Name       string
	Containers []Container // sorted by name
}

// Allocations is one consistent reading of the kubelet. It is shared by
// concurrent readers and must not be modified.
type Allocations struct {
	// Time is when the kubelet answered.
	Time time.Time
	// Pods holds only pods with at least one GPU device (of a device
	// plugin or a claim), sorted by namespace and name.
	Pods []Pod
	// Allocatable is every GPU device the node advertises, sorted by
	// resource and ID. Empty when the kubelet does not implement
	// GetAllocatableResources (before Kubernetes 1.23 by default).
	Allocatable []Device
	// Skipped counts device IDs of GPU resources that could not be parsed.
	Skipped int
	// ClaimDevices counts the GPU devices containers hold through claims.
	// The exporter reads the node's ResourceSlices only once it is not 0.
	ClaimDevices int

	// replicas maps BaseID to the number of allocatable devices sharing it.
	replicas map[string]int
}

// Pod returns the GPU containers of the pod namespace/name.
func (a *Allocations) Pod(namespace, name string) (Pod, bool) {
	i, ok := slices.BinarySearchFunc(a.Pods, Pod{Namespace: namespace, Name: name}, comparePods)
	if !ok {
		return Pod{}, false
	}
	return a.Pods[i], true
}

// Replicas returns into how many replicas the node splits the GPU or MIG
// device behind ref: 1 for a device that is not shared, N for time-slicing
// or MPS with N replicas, and 0 when the device is shared but absent from
// Allocatable, so the split is unknown. A container holding one replica
// holds 1/Replicas of the device.
func (a *Allocations) Replicas(ref DeviceRef) int {
	if ref.Replica < 0 {
		return 1
	}
	return a.replicas[ref.BaseID()]
}

func comparePods(a, b Pod) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

func compareDevices(a, b Device) int {
	return cmp.Or(cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Ref.String(), b.Ref.String()))
}

// buildAllocations keeps the GPU devices of both answers and returns the
// errors of the device IDs it had to skip.
func buildAllocations(now time.Time, list *v1.ListPodResourcesResponse, alloc *v1.AllocatableResourcesResponse, sel Selection) (*Allocations, []error) {
	a := &Allocations{Time: now, replicas: map[string]int{}}
	var errs []error
	gpuDevices := func(in []*v1.ContainerDevices) []Device {
		var out []Device
		for _, cd := range in {
			resource := vocab.Resource(cd.GetResourceName())
			if !IsGPUResource(resource, sel.ResourceNames) {
				continue
			}
			for _, id := range cd.GetDeviceIds() {
				ref, err := ParseDeviceID(resource, id)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				out = append(out, Device{Resource: resource, Ref: ref})
			}
		}
		slices.SortFunc(out, compareDevices)
		return out
	}

	for _, pr := range list.GetPodResources() {
		pod := Pod{Namespace: pr.GetNamespace(), Name: pr.GetName()}
		for _, cr := range pr.GetContainers() {
			devices := gpuDevices(cr.GetDevices())
			claims := gpuClaims(cr.GetDynamicResources(), sel.DRADrivers)
			if len(devices) > 0 || len(claims) > 0 {
				pod.Containers = append(pod.Containers, Container{Name: cr.GetName(), Devices: devices, Claims: claims})
				a.ClaimDevices += len(claims)
			}
		}
		if len(pod.Containers) > 0 {
			slices.SortFunc(pod.Containers, func(a, b Container) int { return cmp.Compare(a.Name, b.Name) })
			a.Pods = append(a.Pods, pod)
		}
	}
	slices.SortFunc(a.Pods, comparePods)

	a.Allocatable = gpuDevices(alloc.GetDevices())
	for _, d := range a.Allocatable {
		a.replicas[d.Ref.BaseID()]++
	}
	a.Skipped = len(errs)
	return a, errs
}

// FromResponses turns the kubelet's answers into Allocations exactly as a
// refresh of the Client does, for callers that obtain the answers another
// way (the fast-forwarded demo asks the simulator directly). Unparseable
// device IDs are skipped and returned as errors.
func FromResponses(now time.Time, list *v1.ListPodResourcesResponse, alloc *v1.AllocatableResourcesResponse, sel Selection) (*Allocations, []error) {
	return buildAllocations(now, list, alloc, sel)
}
