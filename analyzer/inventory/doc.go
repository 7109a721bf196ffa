// Package inventory is the Kubernetes state the analysis joins with GPU
// metrics: who owns a pod, which team a namespace belongs to, how GPU nodes
// are labelled, tainted and shared, which quotas, disruption budgets,
// Kueue queues and DRA claims exist. It is optional: without API access
// the analyzer works from metric labels alone and says which findings it
// had to skip (Inventory.Available false).
//
// This package is the model and the pure questions asked of it
// (Workload, ClaimsOf, SharedGPUs, PDBsFor, Fleet.Of); it links no
// Kubernetes client or API types, so that findings, plan and quota read it
// without client-go. Package kube reads it from a cluster's API server.
//
// # Dynamic Resource Allocation
//
// Pods that get GPUs from NVIDIA's DRA driver name ResourceClaims or
// ResourceClaimTemplates (resource.k8s.io/v1) in spec.resourceClaims
// instead of a GPU limit. ClaimsOf gives, per workload, each GPU claim:
// the template or claim, its device class (gpu.nvidia.com or
// mig.nvidia.com), count, CEL selectors and the MIG profile they pin, and
// for a named ResourceClaim the pods sharing it.
//
// # Several clusters
//
// A Fleet holds one Inventory per cluster label value (For, Of);
// kube.ResolveMembers maps kubeconfig contexts to those values and
// kube.ReadFleet reads each. A cluster that cannot be read degrades only
// its own inventory.
package inventory
