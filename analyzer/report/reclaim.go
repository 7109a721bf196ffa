package report

// ReclaimPreview is the "Reclaim (dry run)" section: what `gpulens
// reclaim` would do to the window's workloads under a policy (Workloads,
// computed by analyzer/reclaim.Preview from the same analysis as the rest
// of the report), and what the reclaimer did in the window (Reclaimed,
// read from its own series in the store). Either may be absent: a report
// of a real cluster has no preview, only the week's record; the demo has
// a preview and no reclaimer running. It is a plain struct so that the
// report links neither the reclaimer nor client-go (analyzer/deps_test.go).
type ReclaimPreview struct {
	// Note says what the preview assumed: the opt-in it took, the policy.
	Note string `json:"note,omitempty"`
	// Policy is the policy judged by, in the reclaimer's own words.
	Policy *ReclaimPolicy `json:"policy,omitempty"`
	// Workloads are the workloads judged, reclaims first, then
	// notify-only, then skips, each group by money then name. Nil when
	// there is no preview.
	Workloads []ReclaimWorkload `json:"workloads,omitempty"`
	// Reclaim and NotifyOnly total the workloads of those actions.
	Reclaim    *ReclaimTotal `json:"reclaim,omitempty"`
	NotifyOnly *ReclaimTotal `json:"notify_only,omitempty"`

	// Reclaimed is what the reclaimer did in the window, from its
	// series; nil when the store holds none of them (it did not run),
	// which ReclaimedNote then says. Nil never reads as zero.
	Reclaimed     *ReclaimedWindow `json:"reclaimed"`
	ReclaimedNote string           `json:"reclaimed_note,omitempty"`
}

// ReclaimDidNotRun is ReclaimedNote where the store holds none of the
// reclaimer's series.
const ReclaimDidNotRun = "gpulens reclaim did not run in this window: the store holds none of its gpulens_reclaim_* series."

// ReclaimPolicy is a reclaim policy's thresholds, as the report shows them.
type ReclaimPolicy struct {
	IdleFor           string  `json:"idle_for"`
	MaxAvgUtilization float64 `json:"max_avg_utilization"`
	MaxP95Utilization float64 `json:"max_p95_utilization"`
	MinCoverage       float64 `json:"min_coverage"`
	GracePeriod       string  `json:"grace_period"`
}

// Preview actions, as the section names them.
const (
	ReclaimActionReclaim    = "reclaim"
	ReclaimActionNotifyOnly = "notify-only"
	ReclaimActionSkip       = "skip"
)

// ReclaimWorkload is one workload's verdict. MonthlyCost is what its GPUs
// cost a month at the report's prices, the money a reclaim frees; it is
// null in JSON where CostKnown is false (jsonmoney.go), never 0.
type ReclaimWorkload struct {
	Cluster     string  `json:"cluster,omitempty"`
	Namespace   string  `json:"namespace"`
	Kind        string  `json:"kind"`
	Name        string  `json:"name"`
	Action      string  `json:"action"`
	Reason      string  `json:"reason"`
	GPUs        int     `json:"gpus"`
	MonthlyCost float64 `json:"monthly_cost"`
	CostKnown   bool    `json:"cost_known"`
}

// ReclaimTotal sums the workloads of one action; MonthlyCost is null in
// JSON where any of them is unpriced.
type ReclaimTotal struct {
	Workloads   int     `json:"workloads"`
	GPUs        int     `json:"gpus"`
	MonthlyCost float64 `json:"monthly_cost"`
	CostKnown   bool    `json:"cost_known"`
}

// ReclaimedWindow is what the reclaimer's series say it did in the
// window: workloads reclaimed (and, run dry, that it would have), the
// GPU-hours they stayed released and what those would have cost in USD at
// the prices of the analyses that reclaimed them.
type ReclaimedWindow struct {
	Workloads       int     `json:"workloads"`
	DryRunWorkloads int     `json:"dry_run_workloads"`
	GPUHours        float64 `json:"gpu_hours"`
	USD             float64 `json:"usd"`
}
