// Package inventory reads the Kubernetes state the analysis joins with GPU
// metrics: who owns a pod, which team a namespace belongs to, how GPU nodes
// are labelled, tainted and shared, and which quotas exist. It is optional:
// without API access the analyzer works from metric labels alone and says
// which findings it had to skip (Inventory.Available false).
//
// Read never fails. Each kind of object is read on its own; a kind that
// cannot be read (RBAC denied, timeout) is named in Inventory.Skipped and
// the rest continues. A kind is either read completely or not at all, so a
// consumer never mistakes a half-read list for the whole cluster.
//
// Lists are paged (500 objects a page) and read once per run: owners are
// resolved from one list of ReplicaSets and one of Jobs, never one GET per
// pod, so the number of API requests does not grow with the number of pods
// beyond the pages themselves.
//
// # Access
//
// The analyzer needs exactly these permissions, and nothing else; in
// particular it never reads Secrets. testdata/rbac.yaml holds them as a
// ClusterRole (cluster-wide lists) and a Role in the GPU Operator namespace
// (the device plugin ConfigMaps, by name):
//
//	""                  pods, namespaces, nodes, resourcequotas     list
//	apps                replicasets                                 list
//	batch               jobs                                        list
//	policy              poddisruptionbudgets                        list
//	scheduling.k8s.io   priorityclasses                             list
//	resource.k8s.io     resourceclaims, resourceclaimtemplates      list
//	kueue.x-k8s.io      clusterqueues, localqueues, resourceflavors list
//	""                  configmaps (by name, gpu-operator)          get
//
// Dropping any rule degrades the inventory instead of breaking it: without
// replicasets or jobs, Deployments and CronJobs are inferred from names;
// without the ConfigMaps, sharing is taken from the node labels that GPU
// Feature Discovery sets (nvidia.com/gpu.replicas, gpu.sharing-strategy);
// without the claims, workloads that get GPUs by Dynamic Resource
// Allocation are not told apart from CPU-only ones and get no claim advice.
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
// ResolveMembers maps kubeconfig contexts to cluster label values and
// ReadFleet reads each with its own context (credentials, QPS, timeout),
// a few at a time, into a Fleet of one Inventory per cluster (For). A
// cluster that cannot be read degrades only its own inventory.
package inventory
