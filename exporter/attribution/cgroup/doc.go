// Package cgroup finds the Kubernetes pod and container a process belongs to
// from its /proc/<pid>/cgroup file.
//
// NVML reports GPU processes by host PID only. The kubelet names every pod
// and container cgroup after the pod UID and the container ID, so the cgroup
// path is the link from a PID to a pod, whatever the cgroup version (v1 or
// v2), cgroup driver (systemd or cgroupfs) or container runtime (containerd,
// CRI-O, Docker via cri-dockerd).
package cgroup
