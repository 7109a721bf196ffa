// Package kube reads the inventory (analyzer/inventory) from a cluster's
// API server through client-go: the only part of the analyzer that links
// the Kubernetes client and API types.
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
// # Several clusters
//
// ResolveMembers maps kubeconfig contexts to cluster label values and
// ReadFleet reads each with its own context (credentials, QPS, timeout),
// a few at a time, into an inventory.Fleet of one Inventory per cluster
// (For). A cluster that cannot be read degrades only its own inventory.
package kube
