package signals

// GPU quotas as the store holds them, for `quota` without cluster access:
// namespaces' ResourceQuotas from kube-state-metrics, Kueue's
// ClusterQueues from Kueue's own metrics. Each is the last value of the
// window (last_over_time over rng): the quota in force at its end, as the
// API server would answer then.

// Labels of the quota series.
const (
	// kube-state-metrics' kube_resourcequota: the quota's name, the
	// resource as the quota keys it (requests.nvidia.com/gpu), and type
	// "hard" or "used".
	LabelResourceQuota = "resourcequota"
	LabelQuotaResource = "resource"
	LabelQuotaType     = "type"
	// Kueue's ClusterQueue metrics: the queue, its cohort ("" for none)
	// and the ResourceFlavor; resource as above, unprefixed.
	LabelClusterQueue = "cluster_queue"
	LabelCohort       = "cohort"
	LabelFlavor       = "flavor"
	// Kueue's LocalQueue metrics name the queue by name and namespace.
	LabelLocalQueue = "name"
)

// Metric names of the quota series.
const (
	MetricResourceQuota       = "kube_resourcequota"
	MetricKueueNominalQuota   = "kueue_cluster_queue_nominal_quota"
	MetricKueueBorrowingLimit = "kueue_cluster_queue_borrowing_limit"
	// MetricKueueLocalQueueUsage is a LocalQueue's usage per flavor; Kueue
	// exports it with the LocalQueueMetrics feature gate. Its flavors are
	// the only trace in the store of which ClusterQueue a LocalQueue
	// (and so a namespace) admits through.
	MetricKueueLocalQueueUsage = "kueue_local_queue_resource_usage"
)

// gpuResources matches an NVIDIA extended resource, bare or as a quota
// keys it (requests., limits.): the reader keeps the GPU ones.
const gpuResources = `(requests\\.|limits\\.)?nvidia\\.com/.+`

func lastBy(labels []string, sel, rng string) string {
	return MaxBy(labels, Range(LastOverTime, sel, rng))
}

// ResourceQuotas is kube_resourcequota's NVIDIA entries at the end of rng,
// hard and used, by namespace, quota, resource and type.
func ResourceQuotas(rng string) string {
	return lastBy([]string{LabelNamespace, LabelResourceQuota, LabelQuotaResource, LabelQuotaType},
		MetricResourceQuota+`{resource=~"`+gpuResources+`"}`, rng)
}

var kueueQuotaLabels = []string{LabelCohort, LabelClusterQueue, LabelFlavor, LabelQuotaResource}

// KueueNominalQuotas and KueueBorrowingLimits are each ClusterQueue's
// nominal quota and borrowing limit of an NVIDIA resource at the end of
// rng, by cohort, queue, flavor and resource.
func KueueNominalQuotas(rng string) string {
	return lastBy(kueueQuotaLabels, MetricKueueNominalQuota+`{resource=~"`+gpuResources+`"}`, rng)
}

func KueueBorrowingLimits(rng string) string {
	return lastBy(kueueQuotaLabels, MetricKueueBorrowingLimit+`{resource=~"`+gpuResources+`"}`, rng)
}

// KueueLocalQueueFlavors is every LocalQueue with a usage series of an
// NVIDIA resource in rng, by namespace, name, flavor and resource.
func KueueLocalQueueFlavors(rng string) string {
	return GroupBy([]string{LabelNamespace, LabelLocalQueue, LabelFlavor, LabelQuotaResource},
		Range(LastOverTime, MetricKueueLocalQueueUsage+`{resource=~"`+gpuResources+`"}`, rng))
}
