package simkube

import (
	"maps"
	"slices"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/exporter/podresources/podresourcestest"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/vocab"
)

// Responses builds the kubelet's List and GetAllocatableResources answers
// for the simulator's current pods and devices, in the device plugin's ID
// forms (GPU-<uuid>, GPU-<uuid>::<n>, MIG-<uuid>), or on a DRA node as
// each container's claim and the device of the driver's pool (the node).
func Responses(n *sim.NodeSim) (*v1.ListPodResourcesResponse, *v1.AllocatableResourcesResponse) {
	return listResponse(n.Node().Name, n.Pods()), allocatableResponse(n.Devices())
}

// Selection is what the exporter counts as GPUs among the simulated
// kubelet's answers: the device plugin's resources and the DRA driver's
// claims.
var Selection = podresources.Selection{DRADrivers: []string{sim.DRADriver}}

func listResponse(node string, pods []sim.PodState) *v1.ListPodResourcesResponse {
	out := &v1.ListPodResourcesResponse{}
	for _, p := range pods {
		c := &v1.ContainerResources{Name: p.Container}
		if p.Claim != "" {
			c.DynamicResources = []*v1.DynamicResource{
				podresourcestest.Claim(p.Namespace, p.Claim, sim.DRADriver, node+"/"+p.DRADevice),
			}
		} else {
			c.Devices = []*v1.ContainerDevices{{ResourceName: string(p.ResourceName), DeviceIds: []string{p.DeviceID}}}
		}
		out.PodResources = append(out.PodResources, &v1.PodResources{
			Namespace: p.Namespace, Name: p.Name, Containers: []*v1.ContainerResources{c},
		})
	}
	return out
}

func allocatableResponse(devs []sim.DeviceInfo) *v1.AllocatableResourcesResponse {
	byResource := map[vocab.Resource][]string{}
	for _, d := range devs {
		if d.ResourceName != "" {
			byResource[d.ResourceName] = append(byResource[d.ResourceName], d.DeviceIDs...)
		}
		for _, in := range d.Instances {
			if in.ResourceName != "" {
				byResource[in.ResourceName] = append(byResource[in.ResourceName], in.UUID)
			}
		}
	}
	out := &v1.AllocatableResourcesResponse{}
	for _, r := range slices.Sorted(maps.Keys(byResource)) {
		out.Devices = append(out.Devices, &v1.ContainerDevices{ResourceName: string(r), DeviceIds: byResource[r]})
	}
	return out
}

// ServeKubelet serves the pod-resources API for n on a unix socket, over a
// real gRPC server, answering from the simulator's state at each call.
func ServeKubelet(socket string, n *sim.NodeSim) (stop func(), err error) {
	return podresourcestest.Serve(socket, func() (*v1.ListPodResourcesResponse, *v1.AllocatableResourcesResponse) {
		return Responses(n)
	})
}
