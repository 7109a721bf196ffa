// Package workload holds a workload's identity, the one type that the
// inventory, the analysis, the findings, the recommendations and the plan
// all name a workload by.
package workload

// Ref is a workload: the controller that owns its pods (Deployment,
// StatefulSet, Job, an operator's kind...), or the pod itself (Kind "Pod")
// when nothing owns it, and the container that holds the GPU. Container is
// empty where the workload as a whole is meant. Cluster is the value of
// the store's cluster label (Thanos's, Mimir's or an external label), empty
// where the store holds one cluster: two clusters' team-a/trainer are two
// workloads.
type Ref struct {
	Cluster   string `json:"cluster,omitempty"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Container string `json:"container,omitempty"`
}

// String is Kind/Namespace/Name, the form kubectl users read.
func (r Ref) String() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }
