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
)

var promqlParser = parser.NewParser(parser.Options{})

// Stats is what one evaluation read.
type Stats struct {
	// Samples is the number of raw samples decoded.
	Samples int64
}

// Rules are the engine's rules for reading samples.
type Rules struct {
	// Lookback is the lookback delta of instant selectors.
	Lookback time.Duration
	// LeftClosed makes lookback and range windows include their start, as
	// Prometheus 2's did; Prometheus 3's are left-open.
	LeftClosed bool
}

// Range evaluates expr at every step of g from q's raw samples, by the
// engine's rules, and answers as the engine's range query does: the
// series with a value at one step at least, each with its values at the
// steps it has one, sorted by labels.
func Range(ctx context.Context, q storage.Queryable, expr string, g Grid, rules Rules) (model.Matrix, Stats, error) {
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		return nil, Stats{}, err
	}
	if e.Type() != parser.ValueTypeVector {
		return nil, Stats{}, unsupported("a %s expression", e.Type())
	}
	ev := &evaluator{r: &reader{ctx: ctx, q: q, g: g, lookback: rules.Lookback.Milliseconds(), leftClosed: rules.LeftClosed}}
	v, err := ev.eval(e)
	st := Stats{Samples: ev.r.samples}
	if err != nil {
		return nil, st, err
	}
	return toMatrix(v.vec, g), st, nil
}

type evaluator struct {
	r *reader
}

// val is an expression's value: a number, or a vector at every step.
type val struct {
	scalar bool
	f      float64
	vec    []*series
}

func (ev *evaluator) eval(e parser.Expr) (val, error) {
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
		s, err := ev.r.instant(e)
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
	case "last_over_time":
		ms, ok := e.Args[0].(*parser.MatrixSelector)
		if !ok || ms.RangeExpr != nil {
			return val{}, unsupported("last_over_time of %s", e.Args[0])
		}
		vs, ok := ms.VectorSelector.(*parser.VectorSelector)
		if !ok {
			return val{}, unsupported("last_over_time of %s", e.Args[0])
		}
		s, err := ev.r.lastOverTime(vs, ms.Range)
		return val{vec: s}, err
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
		v := make([]float64, len(s.v))
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

// toMatrix is the answer in the engine's range-query shape.
func toMatrix(in []*series, g Grid) model.Matrix {
	slices.SortFunc(in, func(a, b *series) int { return labels.Compare(a.lset, b.lset) })
	out := make(model.Matrix, 0, len(in))
	for _, s := range in {
		n := 0
		for _, v := range s.v {
			if !isAbsent(v) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		m := make(model.Metric, s.lset.Len())
		s.lset.Range(func(l labels.Label) { m[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
		pts := make([]model.SamplePair, 0, n)
		for i, v := range s.v {
			if !isAbsent(v) {
				pts = append(pts, model.SamplePair{Timestamp: model.Time(g.At(i)), Value: model.SampleValue(v)})
			}
		}
		out = append(out, &model.SampleStream{Metric: m, Values: pts})
	}
	return out
}
