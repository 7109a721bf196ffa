package scan

import (
	"context"
	"math"
	"regexp"
	"slices"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/kahansum"
)

var promqlParser = parser.NewParser(parser.Options{})

// Rules are the engine's rules for reading samples.
type Rules struct {
	// Lookback is the lookback delta of instant selectors.
	Lookback time.Duration
	// LeftClosed makes lookback and range windows include their start, as
	// Prometheus 2's did; Prometheus 3's are left-open.
	LeftClosed bool
	// MaxSamples bounds the step values one evaluation holds, as the
	// engine's --query.max-samples bounds the samples a query loads: over
	// it, the evaluation is ErrUnsupported and the engine decides. Zero
	// means no bound.
	MaxSamples int
}

// Range evaluates expr at every step of g from q's raw samples, by the
// engine's rules, and answers as the engine's range query does: the
// series with a value at one step at least, each with its values at the
// steps it has one, sorted by labels.
func Range(ctx context.Context, q storage.Queryable, expr string, g Grid, rules Rules) (model.Matrix, error) {
	st, err := RangeSteps(ctx, q, expr, g, rules)
	if err != nil {
		return nil, err
	}
	defer st.Release()
	return st.matrix(), nil
}

// Instant evaluates expr at t from q's raw samples, by the engine's
// rules, as an instant query: range functions over the raw samples of
// their window, subqueries evaluated a series at a time at their own
// steps.
func Instant(ctx context.Context, q storage.Queryable, expr string, t time.Time, rules Rules) (model.Vector, error) {
	st, err := RangeSteps(ctx, q, expr, Grid{Start: t.UnixMilli(), Step: 1, N: 1}, rules)
	if err != nil {
		return nil, err
	}
	defer st.Release()
	m := st.matrix()
	out := make(model.Vector, 0, len(m))
	for _, s := range m {
		out = append(out, &model.Sample{Metric: s.Metric, Value: s.Values[0].Value, Timestamp: s.Values[0].Timestamp})
	}
	return out, nil
}

// newEvaluator parses expr, which must be a vector, for evaluation at g.
func newEvaluator(ctx context.Context, q storage.Queryable, expr string, g Grid, rules Rules) (*evaluator, parser.Expr, error) {
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		return nil, nil, err
	}
	if e.Type() != parser.ValueTypeVector {
		return nil, nil, unsupported("a %s expression", e.Type())
	}
	r := &reader{ctx: ctx, q: q, lookback: rules.Lookback.Milliseconds(), leftClosed: rules.LeftClosed, maxHeld: int64(rules.MaxSamples)}
	return &evaluator{r: r, g: g}, e, nil
}

// evaluator evaluates expressions at the steps of g.
type evaluator struct {
	r *reader
	g Grid
}

// val is an expression's value: a number, or a vector at every step.
type val struct {
	scalar bool
	f      float64
	vec    []*series
}

func (ev *evaluator) eval(e parser.Expr) (val, error) {
	v, err := ev.node(e)
	if err == nil {
		err = ev.r.overBudget()
	}
	return v, err
}

func (ev *evaluator) node(e parser.Expr) (val, error) {
	switch e := e.(type) {
	case *parser.ParenExpr:
		return ev.eval(e.Expr)
	case *parser.NumberLiteral:
		return val{scalar: true, f: e.Val}, nil
	case *parser.UnaryExpr:
		x, err := ev.eval(e.Expr)
		if err != nil || e.Op == parser.ADD {
			return x, err
		}
		if !x.scalar {
			return val{}, unsupported("unary minus on a vector")
		}
		return val{scalar: true, f: -x.f}, nil
	case *parser.VectorSelector:
		s, err := ev.r.instant(e, ev.g)
		return val{vec: s}, err
	case *parser.Call:
		return ev.call(e)
	case *parser.AggregateExpr:
		return ev.aggregate(e)
	case *parser.BinaryExpr:
		return ev.binary(e)
	}
	return val{}, unsupported("%T %s", e, e)
}

func (ev *evaluator) vector(e parser.Expr) ([]*series, error) {
	v, err := ev.eval(e)
	if err != nil {
		return nil, err
	}
	if v.scalar {
		return nil, unsupported("a number where a vector is expected: %s", e)
	}
	return v.vec, nil
}

func (ev *evaluator) number(e parser.Expr) (float64, error) {
	v, err := ev.eval(e)
	if err != nil {
		return 0, err
	}
	if !v.scalar {
		return 0, unsupported("a vector where a number is expected: %s", e)
	}
	return v.f, nil
}

func (ev *evaluator) call(e *parser.Call) (val, error) {
	switch e.Func.Name {
	case "label_replace":
		return ev.labelReplace(e.Args)
	case "last_over_time", "max_over_time", "min_over_time", "sum_over_time", "count_over_time":
		return ev.overTime(e.Func.Name, overTimeFolds[e.Func.Name], e.Args[0])
	case "quantile_over_time":
		q, err := ev.number(e.Args[0])
		if err != nil {
			return val{}, err
		}
		return ev.overTime(e.Func.Name, func(v []float64) float64 { return Quantile(q, v) }, e.Args[1])
	case "increase", "rate":
		return ev.increase(e.Func.Name == "rate", e.Args[0])
	case "clamp_max", "clamp_min":
		in, err := ev.vector(e.Args[0])
		if err != nil {
			return val{}, err
		}
		lim, err := ev.number(e.Args[1])
		if err != nil {
			return val{}, err
		}
		lo, hi := math.Inf(-1), lim
		if e.Func.Name == "clamp_min" {
			lo, hi = lim, math.Inf(1)
		}
		return ev.perValue(in, func(f float64) float64 { return math.Max(lo, math.Min(hi, f)) })
	case "floor":
		in, err := ev.vector(e.Args[0])
		if err != nil {
			return val{}, err
		}
		return ev.perValue(in, math.Floor)
	}
	return val{}, unsupported("function %s", e.Func.Name)
}

// perValue applies fn to every value; the metric name goes, as with the
// engine's math functions.
func (ev *evaluator) perValue(in []*series, fn func(float64) float64) (val, error) {
	out := make([]*series, 0, len(in))
	for _, s := range in {
		v := ev.r.buffer(len(s.v))
		for i, x := range s.v {
			if isAbsent(x) {
				v[i] = absent
			} else {
				v[i] = fn(x)
			}
		}
		out = append(out, &series{lset: dropName(s.lset), v: v})
	}
	m, err := merge(out)
	return val{vec: m}, err
}

func (ev *evaluator) labelReplace(args parser.Expressions) (val, error) {
	str := func(i int) (string, bool) {
		s, ok := args[i].(*parser.StringLiteral)
		if !ok {
			return "", false
		}
		return s.Val, true
	}
	dst, ok1 := str(1)
	repl, ok2 := str(2)
	src, ok3 := str(3)
	re, ok4 := str(4)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return val{}, unsupported("label_replace with computed arguments")
	}
	regex, err := regexp.Compile("^(?s:" + re + ")$")
	if err != nil {
		return val{}, unsupported("label_replace regex %q: %v", re, err)
	}
	in, err := ev.vector(args[0])
	if err != nil {
		return val{}, err
	}
	out := make([]*series, 0, len(in))
	lb := labels.NewBuilder(labels.EmptyLabels())
	for _, s := range in {
		sv := s.lset.Get(src)
		if idx := regex.FindStringSubmatchIndex(sv); idx != nil {
			lb.Reset(s.lset)
			lb.Set(dst, string(regex.ExpandString(nil, repl, sv, idx)))
			s = &series{lset: lb.Labels(), v: s.v}
		}
		out = append(out, s)
	}
	m, err := merge(out)
	return val{vec: m}, err
}

// dropName removes the metric name and the type and unit metadata labels,
// as the engine does for arithmetic and functions.
func dropName(l labels.Labels) labels.Labels {
	if !l.Has(labels.MetricName) && !l.Has("__type__") && !l.Has("__unit__") {
		return l
	}
	return labels.NewBuilder(l).Del(labels.MetricName, "__type__", "__unit__").Labels()
}

// merge joins series with the same labels, which the engine keeps as one
// series; where two have a value at the same step the engine fails
// ("vector cannot contain metrics with the same labelset"), and so does
// this, for the engine to say it. Series without any value are dropped.
func merge(in []*series) ([]*series, error) {
	seen := make(map[uint64][]int, len(in))
	out := in[:0:0]
	for _, s := range in {
		if s.empty() {
			continue
		}
		h := s.lset.Hash()
		dup := -1
		for _, j := range seen[h] {
			if labels.Equal(out[j].lset, s.lset) {
				dup = j
			}
		}
		if dup < 0 {
			seen[h] = append(seen[h], len(out))
			out = append(out, s)
			continue
		}
		v := slices.Clone(out[dup].v)
		for i, x := range s.v {
			if isAbsent(x) {
				continue
			}
			if !isAbsent(v[i]) {
				return nil, unsupported("two series %s at one step", s.lset)
			}
			v[i] = x
		}
		out[dup] = &series{lset: s.lset, v: v}
	}
	return out, nil
}

// matrix is the answer in the engine's range-query shape.
// The points of every series of an answer are cut from one array: one
// allocation, not one a series.
func (st *Steps) matrix() model.Matrix {
	g := st.Grid
	counts := make([]int, len(st.Series))
	total := 0
	for j, s := range st.Series {
		for _, v := range s.V {
			if !isAbsent(v) {
				counts[j]++
			}
		}
		total += counts[j]
	}
	all := make([]model.SamplePair, total)
	out := make(model.Matrix, 0, len(st.Series))
	off := 0
	for j, s := range st.Series {
		n := counts[j]
		// Capped, so that an append to one series cannot write over the
		// next.
		pts := all[off : off+n : off+n]
		k := 0
		ts := g.Start
		for _, v := range s.V {
			if !isAbsent(v) {
				pts[k] = model.SamplePair{Timestamp: model.Time(ts), Value: model.SampleValue(v)}
				k++
			}
			ts += g.Step
		}
		off += n
		out = append(out, &model.SampleStream{Metric: s.Metric(), Values: pts})
	}
	return out
}

// overTimeFolds are the _over_time functions the scan evaluates, over a
// series' values in time order, as promql/functions.go does for floats.
var overTimeFolds = map[string]func([]float64) float64{
	"last_over_time":  func(v []float64) float64 { return v[len(v)-1] },
	"count_over_time": func(v []float64) float64 { return float64(len(v)) },
	"max_over_time": func(v []float64) float64 {
		m := v[0]
		for _, f := range v {
			if f > m || math.IsNaN(m) {
				m = f
			}
		}
		return m
	},
	"min_over_time": func(v []float64) float64 {
		m := v[0]
		for _, f := range v {
			if f < m || math.IsNaN(m) {
				m = f
			}
		}
		return m
	},
	"sum_over_time": func(v []float64) float64 {
		var sum, c float64
		for _, f := range v {
			sum, c = kahansum.Inc(f, sum, c)
		}
		if math.IsInf(sum, 0) {
			return sum
		}
		return sum + c
	},
}

// overTime is fn over a range selector or a subquery. last_over_time of a
// selector is read at every step in one sweep (reader.lastOverTime); the
// others, and subqueries, only at one instant (an instant query's), where
// each series' window is folded once.
func (ev *evaluator) overTime(fn string, fold func([]float64) float64, arg parser.Expr) (val, error) {
	// last_over_time keeps the metric name; the others drop it.
	name := func(l labels.Labels) labels.Labels {
		if fn == "last_over_time" {
			return l
		}
		return dropName(l)
	}
	switch a := arg.(type) {
	case *parser.MatrixSelector:
		vs, ok := a.VectorSelector.(*parser.VectorSelector)
		if !ok || a.RangeExpr != nil {
			return val{}, unsupported("%s of %s", fn, arg)
		}
		if fn == "last_over_time" {
			s, err := ev.r.lastOverTime(vs, ev.g, a.Range)
			return val{vec: s}, err
		}
		if ev.g.N != 1 {
			return val{}, unsupported("%s at several steps", fn)
		}
		var out []*series
		if err := ev.r.window(vs, ev.g.Start, a.Range, func(l labels.Labels, v []float64, _ []int64) {
			out = append(out, &series{lset: name(l), v: []float64{fold(v)}})
		}); err != nil {
			return val{}, err
		}
		m, err := merge(out)
		return val{vec: m}, err
	case *parser.SubqueryExpr:
		if ev.g.N != 1 || a.RangeExpr != nil || a.StepExpr != nil || a.OriginalOffsetExpr != nil || a.Timestamp != nil || a.StartOrEnd != 0 || a.Step <= 0 {
			return val{}, unsupported("%s of %s", fn, arg)
		}
		inner, ok := ev.subqueryGrid(a)
		if !ok {
			return val{}, nil
		}
		sub := &evaluator{r: ev.r, g: inner}
		in, err := sub.vector(a.Expr)
		if err != nil {
			return val{}, err
		}
		out := make([]*series, 0, len(in))
		buf := make([]float64, 0, inner.N)
		for _, s := range in {
			buf = buf[:0]
			for _, f := range s.v {
				if !isAbsent(f) {
					buf = append(buf, f)
				}
			}
			if len(buf) > 0 {
				out = append(out, &series{lset: name(s.lset), v: []float64{fold(buf)}})
			}
		}
		m, err := merge(out)
		return val{vec: m}, err
	}
	return val{}, unsupported("%s of %s", fn, arg)
}

// subqueryGrid is the steps a subquery is evaluated at from the instant
// t: the multiples of its step in (t - offset - range, t - offset], or,
// by Prometheus 2's rule, [t - offset - range, t - offset]; ok is false
// when there is none.
func (ev *evaluator) subqueryGrid(s *parser.SubqueryExpr) (Grid, bool) {
	step, rng, off := s.Step.Milliseconds(), s.Range.Milliseconds(), s.OriginalOffset.Milliseconds()
	end := ev.g.Start - off
	from := end - rng
	start := floorDiv(from, step) * step
	if start < from || (start == from && !ev.r.leftClosed) {
		start += step
	}
	if start > end {
		return Grid{}, false
	}
	return Grid{Start: start, Step: step, N: int((end-start)/step) + 1}, true
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// increase is increase() or rate() of a range selector at one instant,
// as the engine's extrapolatedRate computes it for floats without start
// timestamps (promql/functions.go, v0.316.0): the last value less the
// first, plus every value before a reset, extrapolated towards the
// window's ends by at most half the average interval, and not below the
// counter's zero. Prometheus 2's differs in details, so its stores are
// left to their engine.
func (ev *evaluator) increase(isRate bool, arg parser.Expr) (val, error) {
	ms, ok := arg.(*parser.MatrixSelector)
	if !ok || ms.RangeExpr != nil || ev.g.N != 1 || ev.r.leftClosed {
		return val{}, unsupported("increase of %s here", arg)
	}
	vs, ok := ms.VectorSelector.(*parser.VectorSelector)
	if !ok {
		return val{}, unsupported("increase of %s", arg)
	}
	rangeEnd := ev.g.Start - vs.OriginalOffset.Milliseconds()
	rangeStart := rangeEnd - ms.Range.Milliseconds()
	var out []*series
	if err := ev.r.window(vs, ev.g.Start, ms.Range, func(l labels.Labels, v []float64, ts []int64) {
		if len(v) < 2 {
			return
		}
		result := v[len(v)-1] - v[0]
		for j := 1; j < len(v); j++ {
			if v[j] < v[j-1] {
				result += v[j-1]
			}
		}
		firstT, lastT := ts[0], ts[len(ts)-1]
		durationToStart := float64(firstT-rangeStart) / 1000
		durationToEnd := float64(rangeEnd-lastT) / 1000
		sampledInterval := float64(lastT-firstT) / 1000
		avg := sampledInterval / float64(len(v)-1)
		threshold := avg * 1.1
		if durationToStart >= threshold {
			durationToStart = avg / 2
		}
		durationToZero := durationToStart
		if result > 0 && v[0] >= 0 {
			durationToZero = sampledInterval * (v[0] / result)
		}
		if durationToZero < durationToStart {
			durationToStart = durationToZero
		}
		if durationToEnd >= threshold {
			durationToEnd = avg / 2
		}
		factor := 1.0
		if sampledInterval != 0 {
			factor = (sampledInterval + durationToStart + durationToEnd) / sampledInterval
		}
		if isRate {
			factor /= ms.Range.Seconds()
		}
		out = append(out, &series{lset: dropName(l), v: []float64{result * factor}})
	}); err != nil {
		return val{}, err
	}
	m, err := merge(out)
	return val{vec: m}, err
}
