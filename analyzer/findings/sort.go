package findings

import (
	"cmp"
	"slices"
)

var severityRank = map[Severity]int{Critical: 0, Warning: 1, Info: 2}

// sortFindings orders by severity, then savings (largest first), then by
// the keys, so that reports and goldens are deterministic.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(severityRank[a.Severity], severityRank[b.Severity]),
			cmp.Compare(b.MonthlySavingsUSD, a.MonthlySavingsUSD),
			cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Cluster, b.Cluster),
			cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Workload, b.Workload), cmp.Compare(a.Pod, b.Pod),
			cmp.Compare(a.Container, b.Container), cmp.Compare(a.Node, b.Node), cmp.Compare(a.GPUUUID, b.GPUUUID),
			cmp.Compare(a.GPUInstance, b.GPUInstance))
	})
}
