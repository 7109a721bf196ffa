package inventory

import (
	"slices"

	"github.com/gpulens/gpulens/vocab"
)

// KueueAPI is the Kueue API version read: v1beta2, the storage version
// since Kueue 0.15 (v1beta1 is served beside it).
const KueueAPI = "kueue.x-k8s.io/v1beta2"

// Kueue holds Kueue's queues, where Kueue is installed: each team's
// ClusterQueue with its GPU quotas per ResourceFlavor, the LocalQueues that
// map namespaces to them, and the flavors' node labels.
type Kueue struct {
	ClusterQueues []ClusterQueue
	LocalQueues   []LocalQueue
	// Flavors maps a ResourceFlavor to its node labels, which tell the GPU
	// model it stands for (nvidia.com/gpu.product, GPU Feature Discovery's).
	Flavors map[string]map[string]string
}

// ClusterQueue is a Kueue ClusterQueue's GPU quotas.
type ClusterQueue struct {
	Name string
	// Cohort is the cohort it borrows in; a borrowing limit needs one.
	Cohort string
	Quotas []KueueQuota
}

// KueueQuota is one GPU resource of one flavor of a ClusterQueue.
type KueueQuota struct {
	Flavor   string
	Resource vocab.Resource
	Nominal  float64
	// Borrowing is the borrowing limit; nil when none is set (the cohort's
	// unused quota, all of it).
	Borrowing *float64
	// Path is the JSON pointer of the resource's entry in the object, for
	// a JSON patch.
	Path string
}

// LocalQueue maps a namespace to a ClusterQueue.
type LocalQueue struct {
	Namespace, Name, ClusterQueue string
}

// Namespaces are the namespaces whose LocalQueues point at cq, sorted.
func (k *Kueue) Namespaces(cq string) []string {
	if k == nil {
		return nil
	}
	var out []string
	for _, lq := range k.LocalQueues {
		if lq.ClusterQueue == cq && !slices.Contains(out, lq.Namespace) {
			out = append(out, lq.Namespace)
		}
	}
	slices.Sort(out)
	return out
}
