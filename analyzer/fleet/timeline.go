package fleet

import (
	"maps"
	"slices"
	"time"
)

// Timeline is each namespace's use of its allocations over the window, in
// buckets of Step ending at Ends[i]. Namespaces, not teams: the team a
// namespace belongs to is the report's business, and summing GPU-hours
// regroups them exactly.
type Timeline struct {
	Step       time.Duration
	Ends       []time.Time
	Namespaces []NamespaceSeries
}

// NamespaceSeries holds, per bucket, the allocated GPU-hours that had a
// utilization sample (Measured) and the GPU-hours of them that were used
// (Used, utilization capped at 1). Used/Measured is the bucket's
// utilization; a bucket with Measured 0 has no data, not zero use.
type NamespaceSeries struct {
	// Cluster is as in AllocationKey (MergeTimelines).
	Cluster        string `json:",omitempty"`
	Namespace      string
	Measured, Used []float64
}

// MergeTimelines joins the timelines of several clusters of one window,
// read each through its cluster's scoped source: the same namespace in two
// clusters is two series, named for their clusters.
func MergeTimelines(parts map[string]*Timeline) *Timeline {
	var out *Timeline
	for _, c := range slices.Sorted(maps.Keys(parts)) {
		tl := parts[c]
		if out == nil {
			out = &Timeline{Step: tl.Step, Ends: tl.Ends}
		}
		for _, x := range tl.Namespaces {
			x.Cluster = c
			out.Namespaces = append(out.Namespaces, x)
		}
	}
	return out
}
