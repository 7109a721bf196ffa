package fleet

// ClaimRef names a Kubernetes DRA ResourceClaim (resource.k8s.io/v1).
type ClaimRef struct{ Namespace, Name string }

// String is namespace/name.
func (c ClaimRef) String() string { return c.Namespace + "/" + c.Name }

// PodRef names a pod (or, in ReplicaSetOwners, a ReplicaSet).
type PodRef struct {
	// Cluster is as in AllocationKey.
	Cluster         string `json:",omitempty"`
	Namespace, Name string
}

// Owner is a controller as kube-state-metrics recorded it.
type Owner struct{ Kind, Name string }
