package report

import "github.com/gpulens/gpulens/analyzer/findings"

// findingLabelKeys are the labels a finding may carry, sorted: what
// -l/--selector may name (CheckSelector).
var findingLabelKeys = []string{"allocation_path", "cluster", "gpu_uuid", "kind", "model", "namespace", "node", "pod",
	"severity", "sharing", "team", "workload", "workload_kind"}

// FindingLabels are a finding's labels, as kubectl's -l/--selector reads
// an object's: its kind, severity and subject, the names of the JSON form
// (findingLabelKeys). A label the finding lacks is absent, so "!node"
// selects the fleet's and the workloads' findings, and "node" a node's.
func FindingLabels(f findings.Finding) map[string]string {
	l := map[string]string{"kind": string(f.Kind), "severity": string(f.Severity)}
	for k, v := range map[string]string{"namespace": f.Namespace, "workload": f.Workload, "workload_kind": f.WorkloadKind,
		"pod": f.Pod, "node": f.Node, "gpu_uuid": f.GPUUUID, "model": f.Model, "team": f.Team, "cluster": f.Cluster,
		"allocation_path": string(f.AllocationPath), "sharing": string(f.Sharing)} {
		if v != "" {
			l[k] = v
		}
	}
	return l
}
