package signals

import "slices"

// kube-state-metrics' series the readers join with a schema's signals:
// owner references, which outlive the pods they name in the store.

// owners is the owner series of metric, keyed by the owned object's name
// label, each at its largest value over w: a pod deleted within the
// window still has its owner.
func owners(w Over, metric, name string) string {
	return MaxBy([]string{LabelNamespace, name, "owner_kind", "owner_name"}, w.Apply(MaxOverTime, metric+`{owner_kind!="<none>"}`))
}

// PodOwners, ReplicaSetOwners and JobOwners are kube_pod_owner,
// kube_replicaset_owner and kube_job_owner over w, by the owned object
// (labels pod, replicaset, job_name) and its owner (owner_kind,
// owner_name); objects without an owner left out.
func PodOwners(w Over) string        { return owners(w, "kube_pod_owner", LabelPod) }
func ReplicaSetOwners(w Over) string { return owners(w, "kube_replicaset_owner", "replicaset") }
func JobOwners(w Over) string        { return owners(w, "kube_job_owner", "job_name") }

// ExporterPodNodes is, per pod whose name matches pods (a regex) seen in
// w, the node kube-state-metrics places it on (kube_pod_info, labels pod
// and node): the node of an exporter that wrote its own pod's name as its
// host label (Traits.HostPods).
func ExporterPodNodes(w Over, pods string) string {
	info := `kube_pod_info{pod=~"` + pods + `", node!=""}`
	return MaxBy([]string{LabelPod, LabelNode}, w.Apply(MaxOverTime, info))
}

// OfPods is podOwners restricted to the pods (namespace, pod) that
// pods has a series of: kube_pod_owner's answer then grows with the GPU
// pods, not with every pod of the cluster.
func OfPods(podOwners, pods string) string {
	pod := []string{LabelNamespace, LabelPod}
	return AndOn(podOwners, pod, GroupBy(pod, pods))
}

// kube-state-metrics' container status series, as
// docs/metrics/workload/pod-metrics.md (kubernetes/kube-state-metrics)
// names them; every one is labelled namespace, pod, container and uid.
// The terminated-reason series exist only while a container has such a
// state (v2.0.0-rc.0, #1381 and #1397); the exit code only from v2.7.0
// (2022-11-25, #1752, experimental), so an older install has reasons
// without codes.
const (
	// ContainerRestarts is a counter of the container's restarts.
	ContainerRestarts = "kube_pod_container_status_restarts_total"
	// ContainerLastTerminatedReason (label reason) is why the container
	// last ended: Error, OOMKilled (its cgroup's host memory, not the
	// GPU's), Completed...
	ContainerLastTerminatedReason = "kube_pod_container_status_last_terminated_reason"
	// ContainerTerminatedReason (label reason) is why the container, now
	// terminated, ended.
	ContainerTerminatedReason = "kube_pod_container_status_terminated_reason"
	// ContainerLastTerminatedExitCode is the exit code of that end.
	ContainerLastTerminatedExitCode = "kube_pod_container_status_last_terminated_exitcode"
)

// containerLabels are what kube-state-metrics and a schema's allocations
// both name a container by.
var containerLabels = []string{LabelNamespace, LabelPod, LabelContainer}

// RestartsHeld is every restart in w of a container that held a GPU,
// with the GPU's memory just before it died: one series per restart and
// allocation, with the allocation's key, the last step before the
// restart in label at (Unix seconds) and the GPU's memory at that step in
// label bytes, from count_values at each step of w as XIDHolders does. A
// restart falls between a step and the next whose restart count is
// higher: the next is read with a negative offset (Prometheus from 2.33,
// VictoriaMetrics, the embedded engine, as dcgm.Held does), so the memory
// is the GPU's at the step the container was last seen alive, without a
// second read of it. The container is joined to the GPUs it held at any
// step of w, not at the restart's: a flapping pod label (dcgm-exporter
// without virtual GPUs) names it at some steps only. That presence is
// pinned to the window's end (@ end()), so the engine reads it once, not
// at every step. allocations is a schema's allocations where only
// presence matters, gpuMemory its GPUMemoryUsed.
func RestartsHeld(w Over, allocations, gpuMemory, bytes, at string) string {
	keys := AllocationKeyLabels
	restarts := GroupBy(containerLabels, ContainerRestarts+" offset -"+w.Step+" - "+ContainerRestarts+" > 0")
	tenants := GroupBy(keys, "count_over_time(("+GroupBy(keys, allocations)+")["+w.Range+":"+w.Step+"] @ end())")
	dies := AndOn(tenants, containerLabels, restarts)
	withMemory := CountValues(bytes, keys, GroupLeft("("+dies+")", "*", GPUKey, nil, MaxBy(GPUKey, gpuMemory)))
	return w.Apply(CountOverTime, CountValues(at, append(slices.Clone(keys), bytes), "0 * "+withMemory+" + time()"))
}

// Terminations is, per container that ended within rng (a PromQL
// duration, up to the evaluation), each reason kube-state-metrics gave
// for an end (label reason) and the last exit code (label exitcode),
// one series each.
func Terminations(rng string) string {
	reason := func(metric string) string { return "max_over_time(" + metric + "[" + rng + "]) == 1" }
	reasons := GroupBy(append(slices.Clone(containerLabels), "reason"), reason(ContainerLastTerminatedReason)+" or "+reason(ContainerTerminatedReason))
	codes := CountValues("exitcode", containerLabels, MaxBy(containerLabels, "last_over_time("+ContainerLastTerminatedExitCode+"["+rng+"])"))
	return reasons + " or " + codes
}
