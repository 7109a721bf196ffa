package simkube

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/sim"
)

// ResourceSlice is the slice NVIDIA's DRA driver would publish for a DRA
// node: one device per GPU, or per MIG device of a MIG-partitioned GPU,
// with the driver's type, uuid, parentUUID, profile and productName
// attributes; nil for a node whose GPUs the device plugin hands out. The
// simulator's MIG geometry is fixed, so the slice never changes.
func ResourceSlice(n *sim.NodeSim) *sliceindex.APIResourceSlice {
	node := n.Node()
	if !node.DRA {
		return nil
	}
	attr := func(v string) sliceindex.APIDeviceAttribute { return sliceindex.APIDeviceAttribute{String: &v} }
	s := &sliceindex.APIResourceSlice{
		TypeMeta:   metav1.TypeMeta{Kind: "ResourceSlice", APIVersion: sliceindex.ResourceV1.String()},
		ObjectMeta: metav1.ObjectMeta{Name: node.Name + "-" + sim.DRADriver + "-0", ResourceVersion: "1"},
		Spec: sliceindex.APIResourceSliceSpec{
			Driver: sim.DRADriver, NodeName: &node.Name, Pool: sliceindex.APIPool{Name: node.Name, Generation: 1},
		},
	}
	for _, d := range n.Devices() {
		if len(d.Instances) == 0 {
			s.Spec.Devices = append(s.Spec.Devices, sliceindex.APIDevice{Name: d.DRADevice, Attributes: map[string]sliceindex.APIDeviceAttribute{
				"type": attr(sliceindex.TypeGPU), "uuid": attr(d.UUID), "productName": attr(d.Model)}})
			continue
		}
		for _, in := range d.Instances {
			s.Spec.Devices = append(s.Spec.Devices, sliceindex.APIDevice{Name: in.DRADevice, Attributes: map[string]sliceindex.APIDeviceAttribute{
				"type": attr(sliceindex.TypeMIG), "uuid": attr(in.UUID), "parentUUID": attr(d.UUID),
				"profile": attr(in.Profile), "productName": attr(d.Model)}})
		}
	}
	return s
}

// ResourceSlices lists and watches the node's slice of driver, as the API
// server would serve them to the exporter: its field selectors
// (spec.nodeName, spec.driver) apply, and the watch stays quiet.
func (c *Cluster) ResourceSlices(string) cache.ListerWatcher {
	return &sliceLW{slice: c.slice}
}

type sliceLW struct{ slice *sliceindex.APIResourceSlice }

func (l *sliceLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	sel, err := fieldSelector(opts)
	if err != nil {
		return nil, err
	}
	list := &sliceindex.APIResourceSliceList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	if s := l.slice; s != nil && sel.Matches(fields.Set{
		"metadata.name": s.Name, "spec.nodeName": *s.Spec.NodeName, "spec.driver": s.Spec.Driver, "spec.pool.name": s.Spec.Pool.Name,
	}) {
		list.Items = append(list.Items, *s.DeepCopy())
	}
	return list, nil
}

// Watch stays open without events until stopped: the slice never changes.
func (l *sliceLW) Watch(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }

// IsWatchListSemanticsUnSupported: list, then watch (see Cluster's).
func (l *sliceLW) IsWatchListSemanticsUnSupported() bool { return true }
