package podindex

import "strings"

// Pod is what attribution needs to know about one pod. Its maps are shared
// between readers and must not be modified.
type Pod struct {
	UID       string
	Namespace string
	Name      string
	Phase     PodPhase
	// Containers maps the runtime container ID (64 hex digits, without the
	// containerd:// prefix the pod status shows) to the container name, for
	// every started regular, init and ephemeral container.
	Containers map[string]string
	Labels     map[string]string
	// ConfigHash is set for the mirror pod of a static pod: the kubelet runs
	// a static pod under this hash as UID, so cgroup paths carry it instead
	// of the mirror pod's API UID.
	ConfigHash string
}

// Index looks pods of the node up.
type Index interface {
	// ByUID finds a pod by its API UID (with dashes) or, for a static pod, by
	// the 32-hex-digit config hash its cgroup is named after.
	ByUID(uid string) (Pod, bool)
	ByName(namespace, name string) (Pod, bool)
	// Synced reports whether the index has seen the complete pod list once;
	// before that, a miss does not mean the pod does not exist.
	Synced() bool
}

// Finished reports whether the pod's containers have all terminated for good.
func (p Pod) Finished() bool {
	return p.Phase == PodSucceeded || p.Phase == PodFailed
}

const containerIDLen = 64

// fromAPI converts an API pod. Containers that have not started yet have no
// container ID and are left out; they cannot own a process either.
func fromAPI(p *APIPod) Pod {
	out := Pod{
		UID:        string(p.UID),
		Namespace:  p.Namespace,
		Name:       p.Name,
		Phase:      p.Status.Phase,
		Labels:     p.Labels,
		ConfigHash: p.Annotations[MirrorPodAnnotation],
	}
	n := len(p.Status.ContainerStatuses) + len(p.Status.InitContainerStatuses) + len(p.Status.EphemeralContainerStatuses)
	out.Containers = make(map[string]string, n)
	for _, statuses := range [][]APIContainerStatus{
		p.Status.InitContainerStatuses,
		p.Status.ContainerStatuses,
		p.Status.EphemeralContainerStatuses,
	} {
		for _, s := range statuses {
			if id, ok := ContainerID(s.ContainerID); ok {
				out.Containers[id] = s.Name
			}
		}
	}
	return out
}

// ContainerID strips the runtime prefix from a pod status container ID
// ("containerd://<id>", "cri-o://<id>", "docker://<id>") and reports whether
// what remains is a 64-hex-digit ID, the form cgroup paths carry.
func ContainerID(statusID string) (string, bool) {
	_, id, ok := strings.Cut(statusID, "://")
	if !ok || len(id) != containerIDLen {
		return "", false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", false
		}
	}
	return id, true
}
