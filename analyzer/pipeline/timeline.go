package pipeline

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/schema"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/describe"
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
	Namespace      string
	Measured, Used []float64
}

// timeline runs two range queries, whatever the fleet size. Each point is a
// sum_over_time subquery over its bucket at the analysis step, so a point
// is the bucket's total rather than one sample at the bucket's end.
func timeline(ctx context.Context, rq source.RangeQuerier, sch schema.Schema, w query.Window, points int) (*Timeline, error) {
	step := w.Step
	if step == 0 {
		step = query.DefaultStep
	}
	bucket := w.Duration() / time.Duration(points)
	bucket = max(step, (bucket+step-1)/step*step)
	key := "(" + strings.Join(schema.AllocationKey, ", ") + ")"
	alloc := "max by " + key + " (" + sch.Allocation() + ")"
	util := "clamp_max(max by " + key + " (" + sch.Utilization() + "), 1)"
	over := func(expr string) string {
		return "sum_over_time((sum by (namespace) (" + expr + "))[" + promDuration(bucket) + ":" + promDuration(step) + "])"
	}

	start := w.Start.Add(bucket)
	if start.After(w.End) {
		start = w.End
	}
	tl := &Timeline{Step: bucket}
	for t := start; !t.After(w.End); t = t.Add(bucket) {
		tl.Ends = append(tl.Ends, t)
	}
	byNS := map[string]*NamespaceSeries{}
	hours := step.Hours()
	for i, expr := range []string{alloc + " and " + util, alloc + " * " + util} {
		m, err := rq.QueryRange(ctx, over(expr), start, w.End, bucket)
		if err != nil {
			return nil, err
		}
		for _, s := range m {
			ns := string(s.Metric[model.LabelName(schema.LabelNamespace)])
			x := byNS[ns]
			if x == nil {
				x = &NamespaceSeries{Namespace: ns, Measured: make([]float64, len(tl.Ends)), Used: make([]float64, len(tl.Ends))}
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
	slices.SortFunc(tl.Namespaces, func(a, b NamespaceSeries) int { return strings.Compare(a.Namespace, b.Namespace) })
	return tl, nil
}

var promDuration = describe.Duration
