package podindex

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

var (
	idA = strings.Repeat("a", 64)
	idB = strings.Repeat("b", 64)
	idC = strings.Repeat("c", 64)
)

func TestContainerID(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   string
		wantOK bool
	}{
		{"containerd://" + idA, idA, true},
		{"cri-o://" + idA, idA, true},
		{"docker://" + idA, idA, true},
		{"", "", false},                                     // not started yet
		{idA, "", false},                                    // no runtime prefix
		{"containerd://" + idA[:63], "", false},             // short
		{"containerd://" + strings.ToUpper(idA), "", false}, // cgroup paths are lowercase
		{"containerd://" + idA[:63] + "g", "", false},
	} {
		got, ok := ContainerID(tc.in)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("ContainerID(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestFromAPI(t *testing.T) {
	for _, tc := range []struct {
		name           string
		pod            *APIPod
		wantContainers map[string]string
		wantHash       string
	}{
		{
			name: "regular init and ephemeral containers, one not started",
			pod: &APIPod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"},
				Status: APIPodStatus{
					Phase:                      PodRunning,
					InitContainerStatuses:      []APIContainerStatus{{Name: "init", ContainerID: "containerd://" + idA}},
					ContainerStatuses:          []APIContainerStatus{{Name: "main", ContainerID: "containerd://" + idB}, {Name: "waiting"}},
					EphemeralContainerStatuses: []APIContainerStatus{{Name: "debug", ContainerID: "containerd://" + idC}},
				},
			},
			wantContainers: map[string]string{idA: "init", idB: "main", idC: "debug"},
		},
		{
			name: "mirror pod of a static pod",
			pod: &APIPod{
				ObjectMeta: metav1.ObjectMeta{Name: "etcd-n1", Namespace: "kube-system", UID: "u",
					Annotations: map[string]string{MirrorPodAnnotation: "0123456789abcdef0123456789abcdef"}},
			},
			wantContainers: map[string]string{},
			wantHash:       "0123456789abcdef0123456789abcdef",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fromAPI(tc.pod)
			if !maps.Equal(got.Containers, tc.wantContainers) {
				t.Errorf("Containers = %v, want %v", got.Containers, tc.wantContainers)
			}
			if got.ConfigHash != tc.wantHash {
				t.Errorf("ConfigHash = %q, want %q", got.ConfigHash, tc.wantHash)
			}
			if got.UID != string(tc.pod.UID) || got.Name != tc.pod.Name || got.Namespace != tc.pod.Namespace || got.Phase != tc.pod.Status.Phase {
				t.Errorf("identity = %+v", got)
			}
		})
	}
}

// TestDecodeAndStrip: a full core/v1 pod, as the API server sends it,
// decodes into APIPod with every field the index reads, and strip drops
// what the decoder keeps but the index does not read.
func TestDecodeAndStrip(t *testing.T) {
	full := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", Namespace: "ns", UID: "u", ResourceVersion: "7",
			Labels:        map[string]string{"app": "x"},
			Annotations:   map[string]string{corev1.MirrorPodAnnotationKey: "h", "big": strings.Repeat("x", 1000)},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
		},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "main", Image: "img"}}},
		Status: corev1.PodStatus{
			Phase:                 corev1.PodRunning,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", ContainerID: "containerd://" + idB}},
			ContainerStatuses:     []corev1.ContainerStatus{{Name: "main", ContainerID: "containerd://" + idA, Image: "img"}},
			EphemeralContainerStatuses: []corev1.ContainerStatus{
				{Name: "debug", ContainerID: "containerd://" + idC}},
		},
	}
	in := decodeAPI(t, full).(*APIPod)
	got := fromAPI(in)
	want := Pod{UID: "u", Namespace: "ns", Name: "p", Phase: PodRunning, ConfigHash: "h",
		Labels: map[string]string{"app": "x"}, Containers: map[string]string{idA: "main", idB: "init", idC: "debug"}}
	if got.UID != want.UID || got.Namespace != want.Namespace || got.Name != want.Name || got.Phase != want.Phase ||
		got.ConfigHash != want.ConfigHash || !maps.Equal(got.Labels, want.Labels) || !maps.Equal(got.Containers, want.Containers) {
		t.Errorf("decoded pod = %+v, want %+v", got, want)
	}
	if in.Spec.NodeName != "n1" || in.ResourceVersion != "7" {
		t.Errorf("decoded node name %q, resource version %q; want n1, 7", in.Spec.NodeName, in.ResourceVersion)
	}

	out, err := strip(in)
	if err != nil {
		t.Fatal(err)
	}
	p := out.(*APIPod)
	if p.ManagedFields != nil || p.Annotations["big"] != "" {
		t.Errorf("strip kept unused fields: %+v", p)
	}
	if fromAPI(p).ConfigHash != "h" || fromAPI(p).Containers[idA] != "main" || p.ResourceVersion != "7" || p.Spec.NodeName != "n1" {
		t.Errorf("strip lost needed fields: %+v", p)
	}
	if in.Annotations["big"] == "" || in.ManagedFields == nil {
		t.Error("strip modified its input, which the informer may share")
	}
	if got, _ := strip("not a pod"); got != "not a pod" {
		t.Errorf("strip changed a non-pod object: %v", got)
	}
}

// decodeAPI sends a k8s.io/api object through the wire: JSON as the API
// server writes it, decoded by the scheme NewClient uses.
func decodeAPI(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kind := map[string]string{"*v1.Pod": "Pod", "*v1.PodList": "PodList", "*v1.Node": "Node"}[fmt.Sprintf("%T", obj)]
	gvk := CoreV1.WithKind(kind)
	out, _, err := serializer.NewCodecFactory(scheme).UniversalDeserializer().Decode(b, &gvk, nil)
	if err != nil {
		t.Fatalf("decoding %T: %v", obj, err)
	}
	return out
}
