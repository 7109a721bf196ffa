package sliceindex

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API server's resource.k8s.io/v1 ResourceSlice, cut down to the
// fields the index reads; the JSON decoder skips every other field
// (capacities, counters, taints, node selectors). They stand in for
// k8s.io/api/resource/v1 for the reason podindex's types stand in for
// core/v1: the exporter's binary size and resident memory.

// ResourceV1 is the API group and version the types belong to.
var ResourceV1 = schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"}

// APIResourceSlice is the part of a ResourceSlice the index reads.
type APIResourceSlice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              APIResourceSliceSpec `json:"spec"`
}

// APIResourceSliceSpec is the part of a slice's spec the index reads.
type APIResourceSliceSpec struct {
	Driver string  `json:"driver"`
	Pool   APIPool `json:"pool"`
	// NodeName is set for node-local devices such as GPUs; nil for slices
	// of network-attached devices.
	NodeName *string     `json:"nodeName,omitempty"`
	Devices  []APIDevice `json:"devices,omitempty"`
}

// APIPool names the pool a slice belongs to. A driver that republishes a
// pool raises its generation; slices of older generations are outdated
// and deleted after the new ones are written.
type APIPool struct {
	Name       string `json:"name"`
	Generation int64  `json:"generation"`
}

// APIDevice is one device of a slice: its name, unique in the pool, and
// its attributes.
type APIDevice struct {
	Name       string                        `json:"name"`
	Attributes map[string]APIDeviceAttribute `json:"attributes,omitempty"`
}

// APIDeviceAttribute holds exactly one of the values; the index reads
// strings and integers.
type APIDeviceAttribute struct {
	Int     *int64  `json:"int,omitempty"`
	Bool    *bool   `json:"bool,omitempty"`
	String  *string `json:"string,omitempty"`
	Version *string `json:"version,omitempty"`
}

// APIResourceSliceList is a ResourceSliceList of APIResourceSlices.
type APIResourceSliceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []APIResourceSlice `json:"items"`
}

// AddToScheme registers the types under resource.k8s.io/v1's kinds, with
// the meta types (list options, watch events, status) a REST client and a
// reflector exchange with the server.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(ResourceV1.WithKind("ResourceSlice"), &APIResourceSlice{})
	s.AddKnownTypeWithName(ResourceV1.WithKind("ResourceSliceList"), &APIResourceSliceList{})
	metav1.AddToGroupVersion(s, ResourceV1)
	return nil
}

// DeepCopyInto copies a into out.
func (a APIDeviceAttribute) DeepCopyInto(out *APIDeviceAttribute) {
	*out = APIDeviceAttribute{Int: clonePtr(a.Int), Bool: clonePtr(a.Bool), String: clonePtr(a.String), Version: clonePtr(a.Version)}
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// DeepCopyInto copies s into out.
func (s *APIResourceSlice) DeepCopyInto(out *APIResourceSlice) {
	out.TypeMeta = s.TypeMeta
	s.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = APIResourceSliceSpec{Driver: s.Spec.Driver, Pool: s.Spec.Pool, NodeName: clonePtr(s.Spec.NodeName)}
	if s.Spec.Devices == nil {
		return
	}
	out.Spec.Devices = make([]APIDevice, len(s.Spec.Devices))
	for i, d := range s.Spec.Devices {
		out.Spec.Devices[i].Name = d.Name
		if d.Attributes == nil {
			continue
		}
		out.Spec.Devices[i].Attributes = make(map[string]APIDeviceAttribute, len(d.Attributes))
		for k, v := range d.Attributes {
			var c APIDeviceAttribute
			v.DeepCopyInto(&c)
			out.Spec.Devices[i].Attributes[k] = c
		}
	}
}

// DeepCopy returns a copy of s.
func (s *APIResourceSlice) DeepCopy() *APIResourceSlice {
	if s == nil {
		return nil
	}
	out := new(APIResourceSlice)
	s.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (s *APIResourceSlice) DeepCopyObject() runtime.Object { return s.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *APIResourceSliceList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &APIResourceSliceList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]APIResourceSlice, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}
