// Package podindex answers, for one node, which pod and container a pod UID
// and container ID belong to, and whether the pod is still running.
//
// GPU attribution starts from what the kernel knows about a process (the pod
// UID and container ID in its cgroup path) and from what the kubelet knows
// about allocations (namespace, pod and container names). Only the API
// server links the two, through pod status. Informer keeps a node-scoped
// copy of that link from a client-go shared informer; Static serves a fixed
// set of pods for tests and the simulator.
package podindex
