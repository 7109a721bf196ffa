package cgroup

import "errors"

// Runtime is the container runtime that created a container's cgroup.
type Runtime string

// Runtimes recognised from cgroup names. The cgroupfs driver names container
// cgroups by bare ID for containerd and Docker alike, so there the runtime is
// unknown.
const (
	RuntimeUnknown    Runtime = ""
	RuntimeContainerd Runtime = "containerd"
	RuntimeCRIO       Runtime = "cri-o"
	RuntimeDocker     Runtime = "docker"
)

// QoS is the pod's Kubernetes QoS class, as encoded in its cgroup parent.
type QoS string

// QoS classes. QoSUnknown happens only for cgroupfs paths seen through a
// private cgroup namespace, where the QoS directory can be cut off.
const (
	QoSUnknown    QoS = ""
	QoSGuaranteed QoS = "guaranteed"
	QoSBurstable  QoS = "burstable"
	QoSBestEffort QoS = "besteffort"
)

// Ref identifies the container a process runs in.
type Ref struct {
	// PodUID is the pod UID with dashes, as the API server reports it. For
	// static pods it is the 32-hex-digit config hash the kubelet uses as UID,
	// which the mirror pod carries in its kubernetes.io/config.mirror
	// annotation.
	PodUID string
	// ContainerID is the 64-hex-digit runtime container ID, without the
	// runtime:// prefix the pod status shows.
	ContainerID string
	Runtime     Runtime
	QoS         QoS
}

// ErrNotKubernetes means the process is outside every pod cgroup: a host
// daemon, a user session, or a container not started by the kubelet. It is an
// answer, not a failure.
var ErrNotKubernetes = errors.New("process is not in a Kubernetes pod cgroup")
