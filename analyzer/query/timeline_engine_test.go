package query

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
)

// ReadTimeline is the engine's definition of the utilization over time,
// kept to hold timelineFold to it (TestTimelineFoldMatchesEngine): until
// issue 43 the report read it so, a second read of the window.
// It reads about points buckets of w with two range queries,
// whatever the fleet size. Each point is a sum_over_time subquery over its
// bucket at the window's step, so a point is the bucket's total rather than
// one sample at the bucket's end. A bucket is itself a window, and its
// subquery range is the window's (Window.SubqueryRange): on Prometheus 2
// a range of exactly one bucket would count the step at its start twice,
// once in each bucket.
func ReadTimeline(ctx context.Context, rq source.RangeQuerier, sch signals.Schema, w fleet.Window, points int) (*fleet.Timeline, error) {
	w, err := w.WithDefaults()
	if err != nil {
		return nil, err
	}
	if points < 1 {
		return nil, fmt.Errorf("timeline: %d points, want at least 1", points)
	}
	step := w.Step
	bucket := w.Duration() / time.Duration(points)
	bucket = max(step, (bucket+step-1)/step*step)
	key := "(" + strings.Join(signals.AllocationKeyLabels, ", ") + ")"
	alloc := "max by " + key + " (" + sch.Allocation() + ")"
	util := "clamp_max(max by " + key + " (" + sch.Utilization() + "), 1)"
	start := w.Start.Add(bucket)
	// Every bucket ends a whole number of buckets after the first, and a
	// bucket is a whole number of steps, so one range fits them all.
	rng := fleet.Window{Start: start.Add(-bucket), End: start, Step: step}.SubqueryRange()
	over := func(expr string) string {
		return "sum_over_time((sum by (namespace) (" + expr + "))[" + rng + ":" + promDuration(step) + "])"
	}

	if start.After(w.End) {
		start = w.End
	}
	tl := &fleet.Timeline{Step: bucket}
	for t := start; !t.After(w.End); t = t.Add(bucket) {
		tl.Ends = append(tl.Ends, t)
	}
	byNS := map[string]*fleet.NamespaceSeries{}
	hours := step.Hours()
	for i, expr := range []string{alloc + " and " + util, alloc + " * " + util} {
		m, err := rq.QueryRange(ctx, over(expr), start, w.End, bucket)
		if err != nil {
			return nil, err
		}
		for _, s := range m {
			ns := string(s.Metric[model.LabelName(signals.LabelNamespace)])
			x := byNS[ns]
			if x == nil {
				x = &fleet.NamespaceSeries{Namespace: ns, Measured: make([]float64, len(tl.Ends)), Used: make([]float64, len(tl.Ends))}
				byNS[ns] = x
			}
			dst := [][]float64{x.Measured, x.Used}[i]
			for _, p := range s.Values {
				j := int((int64(p.Timestamp) - start.UnixMilli()) / bucket.Milliseconds())
				if j >= 0 && j < len(dst) {
					dst[j] = float64(p.Value) * hours
				}
			}
		}
	}
	for _, x := range byNS {
		tl.Namespaces = append(tl.Namespaces, *x)
	}
	slices.SortFunc(tl.Namespaces, func(a, b fleet.NamespaceSeries) int { return strings.Compare(a.Namespace, b.Namespace) })
	return tl, nil
}
