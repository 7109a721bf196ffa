package fleet

import (
	"cmp"
	"slices"
)

// SetCluster names cluster in every key of r: its allocations, workloads,
// GPUs and pod owners, which an analysis of one cluster leaves empty.
func (r *Result) SetCluster(cluster string) {
	for i := range r.Allocations {
		r.Allocations[i].Cluster = cluster
	}
	if r.Usage != nil {
		// Keyed as the allocations are, or a plan made from the merged
		// analysis (plan.FromAnalysis) finds none of their rows and
		// plans an empty fleet.
		for i := range r.Usage.Allocations {
			r.Usage.Allocations[i].Cluster = cluster
		}
	}
	for i := range r.Workloads {
		w := &r.Workloads[i]
		w.Cluster = cluster
		for j := range w.GPUs {
			w.GPUs[j].Cluster = cluster
		}
	}
	for i := range r.GPUs {
		r.GPUs[i].Cluster = cluster
	}
	for i := range r.HAMi {
		r.HAMi[i].Cluster = cluster
	}
	if len(r.PodOwners) > 0 {
		owners := make(map[PodRef]Owner, len(r.PodOwners))
		for k, o := range r.PodOwners {
			k.Cluster = cluster
			owners[k] = o
		}
		r.PodOwners = owners
	}
}

// Clustered is the analysis of one cluster of a shared store.
type Clustered struct {
	Cluster string
	Result  *Result
}

// MergeClusters joins the analyses of several clusters of one window,
// each named in its keys (SetCluster), into the fleet's: rows in cluster
// order, queries and shards summed, and each note said of its cluster.
func MergeClusters(parts []Clustered) *Result {
	if len(parts) == 0 {
		return &Result{}
	}
	first := parts[0].Result
	out := &Result{Schema: first.Schema, Window: first.Window, ExpectedSteps: first.ExpectedSteps}
	for _, p := range slices.SortedFunc(slices.Values(parts), func(x, y Clustered) int { return cmp.Compare(x.Cluster, y.Cluster) }) {
		r := p.Result
		r.SetCluster(p.Cluster)
		out.QueryCount += r.QueryCount
		out.RawPasses += r.RawPasses
		out.Passes += r.Passes
		out.RawQueries += r.RawQueries
		out.Shards += r.Shards
		out.Allocations = append(out.Allocations, r.Allocations...)
		out.Workloads = append(out.Workloads, r.Workloads...)
		out.GPUs = append(out.GPUs, r.GPUs...)
		out.HAMi = append(out.HAMi, r.HAMi...)
		for k, o := range r.PodOwners {
			if out.PodOwners == nil {
				out.PodOwners = map[PodRef]Owner{}
			}
			out.PodOwners[k] = o
		}
		for _, n := range r.Notes {
			out.Notes = append(out.Notes, ClusterName(p.Cluster)+": "+n)
		}
		for sig, fields := range r.Missing {
			if out.Missing == nil {
				out.Missing = map[string][]string{}
			}
			out.Missing[sig] = slices.Compact(slices.Sorted(slices.Values(append(out.Missing[sig], fields...))))
		}
	}
	return out
}

// ClusterName is how a cluster is named in notes and tables: its label
// value, or "(no cluster label)" for the series without one.
func ClusterName(cluster string) string {
	if cluster == "" {
		return "(no cluster label)"
	}
	return "cluster " + cluster
}

// OfCluster is r's rows of one cluster (MergeClusters' inverse, less the
// notes and counts, which are the fleet's): what a reader of one cluster's
// part of a fleet's analysis compares with that cluster's own.
func (r *Result) OfCluster(cluster string) *Result {
	out := &Result{Schema: r.Schema, Window: r.Window, ExpectedSteps: r.ExpectedSteps}
	for _, x := range r.Allocations {
		if x.Cluster == cluster {
			out.Allocations = append(out.Allocations, x)
		}
	}
	for _, x := range r.Workloads {
		if x.Cluster == cluster {
			out.Workloads = append(out.Workloads, x)
		}
	}
	for _, x := range r.GPUs {
		if x.Cluster == cluster {
			out.GPUs = append(out.GPUs, x)
		}
	}
	for _, x := range r.HAMi {
		if x.Cluster == cluster {
			out.HAMi = append(out.HAMi, x)
		}
	}
	for k, o := range r.PodOwners {
		if k.Cluster == cluster {
			if out.PodOwners == nil {
				out.PodOwners = map[PodRef]Owner{}
			}
			out.PodOwners[k] = o
		}
	}
	return out
}
