package podindex

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		pod            *corev1.Pod
		wantContainers map[string]string
		wantHash       string
	}{
		{
			name: "regular init and ephemeral containers, one not started",
			pod: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u"},
				Status: corev1.PodStatus{
					Phase:                      corev1.PodRunning,
					InitContainerStatuses:      []corev1.ContainerStatus{{Name: "init", ContainerID: "containerd://" + idA}},
					ContainerStatuses:          []corev1.ContainerStatus{{Name: "main", ContainerID: "containerd://" + idB}, {Name: "waiting"}},
					EphemeralContainerStatuses: []corev1.ContainerStatus{{Name: "debug", ContainerID: "containerd://" + idC}},
				},
			},
			wantContainers: map[string]string{idA: "init", idB: "main", idC: "debug"},
		},
		{
			name: "mirror pod of a static pod",
			pod: &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "etcd-n1", Namespace: "kube-system", UID: "u",
					Annotations: map[string]string{corev1.MirrorPodAnnotationKey: "0123456789abcdef0123456789abcdef"}},
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

func TestStrip(t *testing.T) {
	in := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "p", Namespace: "ns", UID: "u", ResourceVersion: "7",
			Labels:        map[string]string{"app": "x"},
			Annotations:   map[string]string{corev1.MirrorPodAnnotationKey: "h", "big": strings.Repeat("x", 1000)},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
		},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "main", Image: "img"}}},
		Status: corev1.PodStatus{
			Phase:             corev1.PodRunning,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "main", ContainerID: "containerd://" + idA, Image: "img"}},
		},
	}
	out, err := strip(in)
	if err != nil {
		t.Fatal(err)
	}
	p := out.(*corev1.Pod)
	if p.ManagedFields != nil || len(p.Spec.Containers) != 0 || p.Annotations["big"] != "" || p.Status.ContainerStatuses[0].Image != "" {
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
