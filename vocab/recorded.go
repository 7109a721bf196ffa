package vocab

// The series the dcgm-exporter rule file (alerts/dcgm-exporter.rules.yml)
// records, by Prometheus' level:metric:operations convention, that its
// alerts and the dcgm-exporter dashboards read. The per-allocation forms
// of dcgm-exporter's series are long (the kube-state-metrics joins of
// attribution): inlined in a dashboard they made files over the 256 KiB
// that client-side `kubectl apply` and Argo CD can annotate, and queries
// over VictoriaMetrics' 16 KiB -search.maxQueryLen.
//
// Each is recorded twice: with the node named as dcgm-exporter's host
// label says (the HostLabel suffix), as every dashboard panel names it,
// and with the node resolved to the cluster's name for the alerts.
const (
	RecordDCGMAllocation            = "namespace_pod:gpulens_dcgm_allocation:ratio"
	RecordDCGMAllocationUtilization = "namespace_pod:gpulens_dcgm_allocation_utilization:ratio"
	RecordHostLabelSuffix           = "_hostlabel"
)

// TeamLabel is the label teams are told apart by where relabelling or
// kube-state-metrics' joins put one on the series (besides the
// namespace): the dashboards' "Team by" choice, kept through the
// recorded per-allocation series so that they can be summed by team.
const TeamLabel = "team"
