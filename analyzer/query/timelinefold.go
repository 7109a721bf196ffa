package query

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/scan"
)

// timelineFold folds each namespace's use of its allocations over time out
// of the allocation and utilization passes, which read those values anyway:
// the report's charts no longer read the window a second time, through
// two unsharded range queries that failed at 2,000 GPUs (issue 43). The
// figures are ReadTimeline's: per bucket, the allocated GPU-hours that had
// a utilization sample (alloc and util) and the GPU-hours of them used
// (alloc * clamp_max(util, 1)), each allocation's values the max over its
// series (max by the allocation's key), as the engine summed them. It is a
// view of the allocations' share runs (shareFold), read against their
// utilization.
type timelineFold struct {
	tl *fleet.Timeline
	// perBucket is a bucket's steps: bucket j holds the window's steps
	// j*perBucket to (j+1)*perBucket-1, as the engine's sum_over_time
	// subquery of one bucket's range ending at Ends[j] takes them.
	perBucket int
	hours     float64
	byNS      map[string]*fleet.NamespaceSeries
}

// newTimelineFold buckets w as ReadTimeline does for about points
// buckets; nil for no timeline.
func newTimelineFold(w fleet.Window, points int) *timelineFold {
	if points < 1 {
		return nil
	}
	step := w.Step
	bucket := w.Duration() / time.Duration(points)
	bucket = max(step, (bucket+step-1)/step*step)
	start := w.Start.Add(bucket)
	if start.After(w.End) {
		start = w.End
	}
	f := &timelineFold{tl: &fleet.Timeline{Step: bucket}, perBucket: int(bucket / step), hours: step.Hours(),
		byNS: map[string]*fleet.NamespaceSeries{}}
	for t := start; !t.After(w.End); t = t.Add(bucket) {
		f.tl.Ends = append(f.tl.Ends, t)
	}
	return f
}

// fold adds an allocation's utilization at each step (the utilization
// pass's max by its key) to its namespace's buckets, where its share runs
// say it held a share.
func (f *timelineFold) fold(k fleet.AllocationKey, runs []shareRun, util []float64) {
	if f == nil || len(runs) == 0 {
		return
	}
	x := f.byNS[k.Namespace]
	if x == nil {
		x = &fleet.NamespaceSeries{Namespace: k.Namespace, Measured: make([]float64, len(f.tl.Ends)), Used: make([]float64, len(f.tl.Ends))}
		f.byNS[k.Namespace] = x
	}
	for _, r := range runs {
		for i := r.from; i < r.from+r.n && i < len(util); i++ {
			u := util[i]
			j := i / f.perBucket
			if j >= len(x.Measured) {
				break
			}
			if scan.IsAbsent(u) || math.IsNaN(u) {
				continue
			}
			x.Measured[j] += r.v * f.hours
			x.Used[j] += r.v * min(u, 1) * f.hours
		}
	}
}

// result is the timeline, its namespaces sorted; nil without one.
func (f *timelineFold) result() *fleet.Timeline {
	if f == nil {
		return nil
	}
	f.tl.Namespaces = f.tl.Namespaces[:0]
	for _, x := range f.byNS {
		f.tl.Namespaces = append(f.tl.Namespaces, *x)
	}
	slices.SortFunc(f.tl.Namespaces, func(a, b fleet.NamespaceSeries) int { return strings.Compare(a.Namespace, b.Namespace) })
	return f.tl
}
