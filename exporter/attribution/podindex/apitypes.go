package podindex

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The API server's core/v1 Pod, PodList and Node, cut down to the fields
// the index reads. The JSON decoder skips every other field of what the
// server sends.
//
// They stand in for k8s.io/api/core/v1, whose generated (un)marshalling,
// deep-copy and validation code for every core type was the largest package
// of the exporter's binary (1.9 MB of 12 MB of code) and, with its type
// data and function tables, several MiB of its resident memory: the
// binary's pages are mapped in whole on a page-cache hit.

// PodPhase is a pod's status.phase.
type PodPhase string

// The phases of a pod, as the API server spells them.
const (
	PodPending   PodPhase = "Pending"
	PodRunning   PodPhase = "Running"
	PodSucceeded PodPhase = "Succeeded"
	PodFailed    PodPhase = "Failed"
	PodUnknown   PodPhase = "Unknown"
)

// MirrorPodAnnotation carries a static pod's config hash on its mirror pod
// (kubernetes.io/config.mirror).
const MirrorPodAnnotation = "kubernetes.io/config.mirror"

// CoreV1 is the API group and version the types belong to: the legacy
// core group, served under /api/v1.
var CoreV1 = schema.GroupVersion{Version: "v1"}

// APIPod is the part of a core/v1 Pod the index reads.
type APIPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              APIPodSpec   `json:"spec,omitempty"`
	Status            APIPodStatus `json:"status,omitempty"`
}

// APIPodSpec is the part of a pod's spec the index reads.
type APIPodSpec struct {
	NodeName string `json:"nodeName,omitempty"`
}

// APIPodStatus is the part of a pod's status the index reads.
type APIPodStatus struct {
	Phase                      PodPhase             `json:"phase,omitempty"`
	InitContainerStatuses      []APIContainerStatus `json:"initContainerStatuses,omitempty"`
	ContainerStatuses          []APIContainerStatus `json:"containerStatuses,omitempty"`
	EphemeralContainerStatuses []APIContainerStatus `json:"ephemeralContainerStatuses,omitempty"`
}

// APIContainerStatus names a container and its runtime ID
// ("containerd://<64 hex digits>"), empty until it has started.
type APIContainerStatus struct {
	Name        string `json:"name"`
	ContainerID string `json:"containerID,omitempty"`
}

// APIPodList is a core/v1 PodList of APIPods.
type APIPodList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []APIPod `json:"items"`
}

// APINode is the part of a core/v1 Node the exporter reads: its labels.
type APINode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

// AddToScheme registers the types under core/v1's kinds, with the meta
// types (list options, watch events, status) a REST client and a reflector
// exchange with the server.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(CoreV1.WithKind("Pod"), &APIPod{})
	s.AddKnownTypeWithName(CoreV1.WithKind("PodList"), &APIPodList{})
	s.AddKnownTypeWithName(CoreV1.WithKind("Node"), &APINode{})
	metav1.AddToGroupVersion(s, CoreV1)
	return nil
}

// DeepCopyInto copies s into out.
func (s *APIPodStatus) DeepCopyInto(out *APIPodStatus) {
	out.Phase = s.Phase
	out.InitContainerStatuses = cloneStatuses(s.InitContainerStatuses)
	out.ContainerStatuses = cloneStatuses(s.ContainerStatuses)
	out.EphemeralContainerStatuses = cloneStatuses(s.EphemeralContainerStatuses)
}

func cloneStatuses(in []APIContainerStatus) []APIContainerStatus {
	if in == nil {
		return nil
	}
	return append([]APIContainerStatus(nil), in...)
}

// DeepCopyInto copies p into out.
func (p *APIPod) DeepCopyInto(out *APIPod) {
	out.TypeMeta = p.TypeMeta
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = p.Spec
	p.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of p.
func (p *APIPod) DeepCopy() *APIPod {
	if p == nil {
		return nil
	}
	out := new(APIPod)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *APIPod) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *APIPodList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &APIPodList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]APIPod, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// DeepCopyObject implements runtime.Object.
func (n *APINode) DeepCopyObject() runtime.Object {
	if n == nil {
		return nil
	}
	out := &APINode{TypeMeta: n.TypeMeta}
	n.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}
