package findings

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// Clustered is what Detect found in one cluster of a shared store, over
// that cluster's analysis and inventory.
type Clustered struct {
	Cluster string
	Result  *Result
}

// MergeClusters joins the findings of several clusters, each detected
// over its own analysis and inventory, into the fleet's: every finding and
// recommendation names its cluster, and a kind skipped in some clusters
// only says which.
func MergeClusters(parts []Clustered) *Result {
	out := &Result{WorkloadSources: map[string]int{}}
	skipped := map[string][]string{}
	var order []string
	for _, p := range slices.SortedFunc(slices.Values(parts), func(x, y Clustered) int { return cmp.Compare(x.Cluster, y.Cluster) }) {
		r := p.Result
		out.Config = r.Config
		for _, f := range r.Findings {
			f.Cluster = p.Cluster
			if f.Recommendation != nil {
				rec := *f.Recommendation
				rec.Workload.Cluster = p.Cluster
				f.Recommendation = &rec
			}
			out.Findings = append(out.Findings, f)
		}
		for k, n := range r.WorkloadSources {
			out.WorkloadSources[k] += n
		}
		for _, s := range r.Skipped {
			if _, seen := skipped[s]; !seen {
				order = append(order, s)
			}
			skipped[s] = append(skipped[s], p.Cluster)
		}
	}
	for _, s := range order {
		if len(skipped[s]) == len(parts) {
			out.Skipped = append(out.Skipped, s)
			continue
		}
		var names []string
		for _, c := range skipped[s] {
			names = append(names, fleet.ClusterName(c))
		}
		out.Skipped = append(out.Skipped, s+" (in "+strings.Join(names, ", ")+")")
	}
	sortFindings(out.Findings)
	return out
}
