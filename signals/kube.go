package signals

// kube-state-metrics' series the readers join with a schema's signals:
// owner references, which outlive the pods they name in the store.

// owners is the owner series of metric, keyed by the owned object's name
// label, each at its largest value over w: a pod deleted within the
// window still has its owner.
func owners(w Over, metric, name string) string {
	return MaxBy([]string{LabelNamespace, name, "owner_kind", "owner_name"}, w.Apply("max_over_time", metric+`{owner_kind!="<none>"}`))
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
	return MaxBy([]string{LabelPod, LabelNode}, w.Apply("max_over_time", info))
}

// OfPods is podOwners restricted to the pods (namespace, pod) that
// pods has a series of: kube_pod_owner's answer then grows with the GPU
// pods, not with every pod of the cluster.
func OfPods(podOwners, pods string) string {
	pod := []string{LabelNamespace, LabelPod}
	return AndOn(podOwners, pod, GroupBy(pod, pods))
}
