package plan

import (
	"cmp"
	"slices"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// Clustered is the plan of one cluster of a shared store: a cluster's
// workloads cannot move to another cluster's nodes, so each is planned
// apart.
type Clustered struct {
	Cluster string
	Plan    *Plan
}

// MergeClusters joins the plans of the clusters of one window into the
// fleet's: each pool, and each assignment's workload, names its cluster;
// pools in cluster order; totals summed; each note said of its cluster.
// The window and policy are the first plan's, which all share.
func MergeClusters(parts []Clustered) *Plan {
	if len(parts) == 0 {
		return &Plan{}
	}
	parts = slices.SortedFunc(slices.Values(parts), func(x, y Clustered) int { return cmp.Compare(x.Cluster, y.Cluster) })
	first := parts[0].Plan
	out := &Plan{Start: first.Start, End: first.End, Step: first.Step, StepS: first.StepS, Policy: first.Policy, Pools: []PoolPlan{}}
	for _, part := range parts {
		p := part.Plan
		out.Clusters = append(out.Clusters, part.Cluster)
		for _, pp := range p.Pools {
			pp.Cluster = part.Cluster
			pp.Assignments = slices.Clone(pp.Assignments)
			for i := range pp.Assignments {
				pp.Assignments[i].Workload.Cluster = part.Cluster
			}
			out.Pools = append(out.Pools, pp)
		}
		out.GPUsToday += p.GPUsToday
		out.GPUsNeeded += p.GPUsNeeded
		out.NodesToday += p.NodesToday
		out.NodesNeeded += p.NodesNeeded
		out.HeadroomGPUs += p.HeadroomGPUs
		out.MonthlySavingUSD += p.MonthlySavingUSD
		out.CapacityFreedGPUs += p.CapacityFreedGPUs
		out.CapacityFreedMonthlyUSD += p.CapacityFreedMonthlyUSD
		out.AsIs = out.AsIs || p.AsIs
		for _, l := range p.Released {
			out.Released = append(out.Released, fleet.ClusterName(part.Cluster)+": "+l)
		}
		for _, n := range p.Notes {
			out.Notes = append(out.Notes, fleet.ClusterName(part.Cluster)+": "+n)
		}
	}
	return out
}

// clustered says whether the plan is of several clusters (or of one
// cluster of a shared store), whose rows name their cluster.
func (p *Plan) clustered() bool { return len(p.Clusters) > 0 }

// clusterCell is a cluster in a table's cluster column, named as the
// report names the series without the label.
func clusterCell(c string) string {
	if c == "" {
		return "(no cluster label)"
	}
	return c
}
