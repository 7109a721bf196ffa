package query

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// ClusterValues are the values label takes on the series that identify
// sch's exporter over w, sorted; "" stands for series without it. A store
// of one cluster answers [""], or nothing where it has no data.
//
// It must not miss a cluster: a cluster left out is left out of every
// figure, silently. So it reads every sample of those series once, in
// tiles: at each of about probeSteps instants, last_over_time over the
// tile since the one before, and the window's end on its own (the last
// aligned instant may fall before it). Its peak is one tile's samples, a
// thirtieth of the window's; its cost one pass over the schema's presence
// metrics (gpulens_gpu_info for gpulens's series).
func ClusterValues(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window, label string) ([]string, error) {
	if !model.LabelName(label).IsValidLegacy() {
		return nil, fmt.Errorf("cluster label %q is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", label)
	}
	w, err := w.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("analysis window: %w", err)
	}
	step := promDuration(max(w.Step, (w.Duration() / probeSteps).Truncate(time.Second)))
	names := sch.Identifying()
	if p, ok := sch.(interface{ Present() []string }); ok {
		names = p.Present()
	}
	if one, ok := unlabelled(ctx, src, names, w, label); ok {
		return one, nil
	}
	q := signals.ClusterValues(label, names, w.SubqueryRange(), step)
	vec, _, err := instantQuery(ctx, src, "clusters", q, w.End)
	if err != nil {
		return nil, fmt.Errorf("analysis query \"clusters\": %w", err)
	}
	var out []string
	for _, s := range vec {
		if !math.IsNaN(float64(s.Value)) {
			out = append(out, string(s.Metric[model.LabelName(label)]))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Scoped is src reading only the series whose label is value (without
// it, where value is ""): every vector selector of every query it is
// given gets that matcher, so an analysis through it is the analysis of
// one cluster of a shared store, exactly as over that cluster's own
// Prometheus. It keeps src's range queries and their limit, which the
// analysis looks for by type.
func Scoped(src source.Source, label, value string) source.Source {
	s := scoped{Source: src, m: labels.MustNewMatcher(labels.MatchEqual, label, value)}
	rq, ok := src.(source.RangeQuerier)
	if !ok {
		return s
	}
	r := scopedRange{scoped: s, rq: rq}
	if l, ok := src.(rangeStepLimiter); ok {
		return scopedLimited{scopedRange: r, l: l}
	}
	return r
}

type scoped struct {
	source.Source
	m *labels.Matcher
}

// scope adds the matcher to every vector selector of q; a selector that
// already has a matcher on the label gets it too, and PromQL ands them.
func (s scoped) scope(q string) (string, error) {
	e, err := promqlParser.ParseExpr(q)
	if err != nil {
		return "", fmt.Errorf("parsing %q to scope it to %s: %w", q, s.m, err)
	}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			vs.LabelMatchers = append(vs.LabelMatchers, s.m)
		}
		return nil
	})
	return e.String(), nil
}

func (s scoped) Query(ctx context.Context, q string, ts time.Time) (model.Vector, error) {
	q, err := s.scope(q)
	if err != nil {
		return nil, err
	}
	return s.Source.Query(ctx, q, ts)
}

func (s scoped) Describe() string { return s.Source.Describe() + " (" + s.m.String() + ")" }

type scopedRange struct {
	scoped
	rq source.RangeQuerier
}

func (s scopedRange) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	q, err := s.scope(q)
	if err != nil {
		return nil, err
	}
	return s.rq.QueryRange(ctx, q, start, end, step)
}

type scopedLimited struct {
	scopedRange
	l rangeStepLimiter
}

func (s scopedLimited) MaxRangeSteps() int { return s.l.MaxRangeSteps() }

// RawSamples are src's raw samples of the one cluster: every Select gets
// the matcher, as scope gives it to every selector of a query.
func (s scoped) RawSamples() (source.RawStore, bool) {
	return source.WrapRawSamples(s.Source, []*labels.Matcher{s.m}, nil)
}
