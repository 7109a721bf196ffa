package source

import (
	"context"
	"math"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// FirstSampler is a source that can tell cheaply, without reading samples,
// when its first sample in a window is. The analysis starts its window
// there: the PromQL engine's subqueries cost memory for every step of the
// window asked for, data or none, so a 3650-day window over a two-day
// store would otherwise take gigabytes to read two days.
type FirstSampler interface {
	// FirstSample is the time of the store's first sample in [start,
	// end], or a time at most precision before it; ok is false when the
	// window holds no sample.
	FirstSample(ctx context.Context, start, end time.Time, precision time.Duration) (first time.Time, ok bool, err error)
}

var (
	_ FirstSampler = (*Embedded)(nil)
	_ FirstSampler = (*Remote)(nil)
)

// FirstSample implements FirstSampler from the blocks' meta.json and the
// head's bounds, which tsdb keeps in memory.
func (e *Embedded) FirstSample(_ context.Context, start, end time.Time, _ time.Duration) (time.Time, bool, error) {
	blocks, spans := e.bounds()
	for _, b := range blocks {
		spans = append(spans, span{b.Meta().MinTime, b.Meta().MaxTime})
	}
	lo, hi := start.UnixMilli(), end.UnixMilli()
	first := int64(math.MaxInt64)
	for _, s := range spans {
		if s.max < lo || s.min > hi {
			continue
		}
		first = min(first, max(s.min, lo))
	}
	if first == math.MaxInt64 {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(first).UTC(), true, nil
}

// FirstSample implements FirstSampler through the label-values API over
// time ranges, which Prometheus, Thanos and VictoriaMetrics answer from
// their index (by block, by store, by day) without reading a sample.
// VictoriaMetrics answers a range over 40 days from its global index,
// which holds every series it ever had, so no probe spans more than
// probeSpan: the window is walked back from its end a span at a time to
// the earliest span with series, then that span is halved to precision.
// The index's granularity makes the time found up to a block (or a day)
// early, never late.
func (r *Remote) FirstSample(ctx context.Context, start, end time.Time, precision time.Duration) (time.Time, bool, error) {
	precision = max(precision, time.Second)
	if ok, err := r.hasSeries(ctx, start, start.Add(precision)); err != nil || ok {
		return start, ok, err
	}
	// The earliest span with series, walking back from the end; empty
	// spans (a gap in the data) are walked over, up to maxProbes.
	// Past the first empty span, one probe asks about all that is left:
	// a store whose index is exact (Prometheus, Thanos) says no, and the
	// walk ends; VictoriaMetrics' global index says yes, and it goes on.
	var earliest time.Time
	found, askedRest := false, false
	for hi, probes := end, 0; hi.After(start); hi, probes = hi.Add(-probeSpan), probes+1 {
		if probes == maxProbes {
			return start, true, nil // too far to walk: the window as asked
		}
		lo := hi.Add(-probeSpan)
		if lo.Before(start) {
			lo = start
		}
		ok, err := r.hasSeries(ctx, lo, hi)
		if err != nil {
			return time.Time{}, false, err
		}
		if ok {
			earliest, found = lo, true
			continue
		}
		if found && !askedRest && lo.After(start) {
			askedRest = true
			rest, err := r.hasSeries(ctx, start, lo)
			if err != nil {
				return time.Time{}, false, err
			}
			if !rest {
				break
			}
		}
	}
	if !found {
		return time.Time{}, false, nil
	}
	// No series in [earliest, lo]; some in [earliest, hi].
	lo, hi := earliest, earliest.Add(probeSpan)
	if hi.After(end) {
		hi = end
	}
	if ok, err := r.hasSeries(ctx, earliest, earliest.Add(precision)); err != nil || ok {
		return earliest, true, err
	}
	lo = earliest.Add(precision)
	for hi.Sub(lo) > precision {
		mid := lo.Add(hi.Sub(lo) / 2)
		ok, err := r.hasSeries(ctx, earliest, mid)
		if err != nil {
			return time.Time{}, false, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, true, nil
}

// probeSpan is the longest range FirstSample asks a store's index about:
// under the 40 days past which VictoriaMetrics answers from its global
// index. maxProbes bounds the walk: 400 spans are 33 years.
const (
	probeSpan = 30 * 24 * time.Hour
	maxProbes = 400
)

// hasSeries says whether any series has a sample in [start, end], by the
// store's index. No limit is asked: Prometheus answers a limited list
// with a "results truncated" warning, which reads as a partial answer.
func (r *Remote) hasSeries(ctx context.Context, start, end time.Time) (bool, error) {
	var n int
	err := r.do(ctx, "finding the first sample", func(ctx context.Context) (v1.Warnings, error) {
		vals, warnings, _, err := r.api.LabelValues(ctx, model.MetricNameLabel, nil, start, end)
		n = len(vals)
		return warnings, err
	})
	return n > 0, err
}
