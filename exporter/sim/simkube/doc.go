// Package simkube stands in for the parts of a Kubernetes node that the
// exporter's attribution reads, built from a running simulation: the
// kubelet's pod-resources answers, the host's /proc/<pid>/cgroup files, and
// the API server's pods (listed and watched in memory). With them, the
// exporter's --backend=sim and the demo run the real attribution path:
// the real gRPC client and device-ID parser, the real cgroup parser and
// the real pod informer.
package simkube
