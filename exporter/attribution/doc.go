// Package attribution says which containers hold which GPUs of a node, how
// large a share of each physical GPU they hold, and how much of that share
// they use.
//
// It joins three views that know nothing of each other: the kubelet's
// allocations (device IDs per container, and the devices of its
// ResourceClaims, which the node's ResourceSlices name), NVML's snapshot
// (devices, MIG instances and host PIDs) and, for GPUs that several
// containers share, the process → cgroup → pod link. Every record states how its usage was measured
// (the device itself, a MIG instance's GPM counters, or the sum of the
// container's processes), and a device value is never copied to several
// containers: when a device is shared, usage comes only from processes, and
// without per-process data it is left unknown rather than guessed.
package attribution
