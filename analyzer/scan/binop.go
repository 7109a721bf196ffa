package scan

import (
	"math"
	"slices"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

func (ev *evaluator) binary(e *parser.BinaryExpr) (val, error) {
	l, err := ev.eval(e.LHS)
	if err != nil {
		return val{}, err
	}
	r, err := ev.eval(e.RHS)
	if err != nil {
		return val{}, err
	}
	switch {
	case l.scalar && r.scalar:
		f, keep, ok := elemBinop(e.Op, l.f, r.f)
		if !ok {
			return val{}, unsupported("operator %s", e.Op)
		}
		if e.Op.IsComparisonOperator() {
			f = 0
			if keep {
				f = 1
			}
		}
		return val{scalar: true, f: f}, nil
	}
	if _, _, ok := elemBinop(e.Op, 0, 0); !ok && !e.Op.IsSetOperator() {
		return val{}, unsupported("operator %s", e.Op)
	}
	switch {
	case r.scalar:
		return ev.vectorScalar(e, l.vec, r.f, false)
	case l.scalar:
		return ev.vectorScalar(e, r.vec, l.f, true)
	}
	m := e.VectorMatching
	if m == nil {
		return val{}, unsupported("vector operation without matching")
	}
	if m.FillValues.LHS != nil || m.FillValues.RHS != nil {
		return val{}, unsupported("fill modifiers")
	}
	switch e.Op {
	case parser.LAND, parser.LOR, parser.LUNLESS:
		return ev.setOp(e.Op, m, l.vec, r.vec)
	}
	return ev.vectorBinop(e, m, l.vec, r.vec)
}

// elemBinop is vectorElemBinop's float case: the value, and whether a
// comparison holds (always true otherwise); ok is false for an operator
// not handled here.
func elemBinop(op parser.ItemType, lhs, rhs float64) (float64, bool, bool) {
	switch op {
	case parser.ADD:
		return lhs + rhs, true, true
	case parser.SUB:
		return lhs - rhs, true, true
	case parser.MUL:
		return lhs * rhs, true, true
	case parser.DIV:
		return lhs / rhs, true, true
	case parser.POW:
		return math.Pow(lhs, rhs), true, true
	case parser.MOD:
		return math.Mod(lhs, rhs), true, true
	case parser.EQLC:
		return lhs, lhs == rhs, true
	case parser.NEQ:
		return lhs, lhs != rhs, true
	case parser.GTR:
		return lhs, lhs > rhs, true
	case parser.LSS:
		return lhs, lhs < rhs, true
	case parser.GTE:
		return lhs, lhs >= rhs, true
	case parser.LTE:
		return lhs, lhs <= rhs, true
	case parser.ATAN2:
		return math.Atan2(lhs, rhs), true, true
	}
	return 0, false, false
}

// result is one step's value of e from its operands' values, and whether
// it is kept: a comparison without bool filters, with bool it is 0 or 1.
// The operator is known to be one elemBinop handles.
func result(e *parser.BinaryExpr, lf, rf float64) (float64, bool) {
	r, keep, _ := elemBinop(e.Op, lf, rf)
	if e.ReturnBool {
		if keep {
			return 1, true
		}
		return 0, true
	}
	return r, keep
}

func changesMetricSchema(op parser.ItemType) bool {
	switch op {
	case parser.ADD, parser.SUB, parser.DIV, parser.MUL, parser.POW, parser.MOD, parser.ATAN2:
		return true
	}
	return false
}

// vectorScalar is VectorscalarBinop: swap when the number is on the left,
// in which case a comparison still keeps the vector's value.
func (ev *evaluator) vectorScalar(e *parser.BinaryExpr, in []*series, x float64, swap bool) (val, error) {
	drop := changesMetricSchema(e.Op) || e.ReturnBool
	out := make([]*series, 0, len(in))
	for _, s := range in {
		v := ev.r.newValues(len(s.v))
		for i, f := range s.v {
			if isAbsent(f) {
				continue
			}
			lf, rf := f, x
			if swap {
				lf, rf = x, f
			}
			r, keep := result(e, lf, rf)
			if keep && e.Op.IsComparisonOperator() && swap && !e.ReturnBool {
				r = rf
			}
			if keep {
				v[i] = r
			}
		}
		l := s.lset
		if drop {
			l = dropName(l)
		}
		out = append(out, &series{lset: l, v: v})
	}
	m, err := merge(out)
	return val{vec: m}, err
}

// signature is the engine's join key of a series under m.
func signature(m *parser.VectorMatching) func(labels.Labels) string {
	buf := make([]byte, 0, 256)
	names := slices.Clone(m.MatchingLabels)
	if m.On {
		slices.Sort(names)
		return func(l labels.Labels) string { return string(l.BytesWithLabels(buf, names...)) }
	}
	names = append([]string{model.MetricNameLabel, model.MetricTypeLabel, model.MetricUnitLabel}, names...)
	slices.Sort(names)
	return func(l labels.Labels) string { return string(l.BytesWithoutLabels(buf, names...)) }
}

// presence is, per signature, the steps at which a series with it has a
// value.
func presence(in []*series, sig func(labels.Labels) string, n int) map[string][]bool {
	p := map[string][]bool{}
	for _, s := range in {
		k := sig(s.lset)
		at := p[k]
		if at == nil {
			at = make([]bool, n)
			p[k] = at
		}
		for i, v := range s.v {
			if !isAbsent(v) {
				at[i] = true
			}
		}
	}
	return p
}

// setOp is and, or and unless, step by step as VectorAnd, VectorOr and
// VectorUnless: the signatures present on one side at a step decide
// which series of the other are kept at it.
func (ev *evaluator) setOp(op parser.ItemType, m *parser.VectorMatching, lhs, rhs []*series) (val, error) {
	n := ev.g.N
	sig := signature(m)
	mask := func(in []*series, by map[string][]bool, keepWhere bool) []*series {
		out := make([]*series, 0, len(in))
		for _, s := range in {
			at := by[sig(s.lset)]
			if at == nil {
				if !keepWhere {
					out = append(out, s)
				}
				continue
			}
			v := ev.r.newValues(n)
			for i, x := range s.v {
				if at[i] == keepWhere {
					v[i] = x
				}
			}
			out = append(out, &series{lset: s.lset, v: v})
		}
		return out
	}
	var out []*series
	switch op {
	case parser.LAND:
		out = mask(lhs, presence(rhs, sig, n), true)
	case parser.LUNLESS:
		out = mask(lhs, presence(rhs, sig, n), false)
	case parser.LOR:
		out = append(slices.Clone(lhs), mask(rhs, presence(lhs, sig, n), false)...)
	}
	res, err := merge(out)
	return val{vec: res}, err
}

// vectorBinop is VectorBinop without fill values: each series of the
// "many" side (lhs; rhs for group_right) is paired with the series of the
// "one" side with its signature, and the pair's values are combined at
// the steps both have one. The engine's failures are kept: two "one"
// series, or (one-to-one) two "many" series, matched at one step, or two
// results with the same labels at one step.
func (ev *evaluator) vectorBinop(e *parser.BinaryExpr, m *parser.VectorMatching, lhs, rhs []*series) (val, error) {
	n := ev.g.N
	swapped := m.Card == parser.CardOneToMany
	if swapped {
		lhs, rhs = rhs, lhs
	}
	sig := signature(m)
	ones := map[string][]*series{}
	for _, s := range rhs {
		k := sig(s.lset)
		ones[k] = append(ones[k], s)
	}
	for _, group := range ones {
		if len(group) > 1 && overlap(group, n) {
			return val{}, unsupported("many-to-many matching at one step")
		}
	}
	drop := e.ReturnBool || changesMetricSchema(e.Op)
	// matched records, per match group (the signature, and for
	// many-to-one the result's labels), the steps already matched.
	matched := map[string][]bool{}
	lb := labels.NewBuilder(labels.EmptyLabels())
	var out []*series
	for _, ls := range lhs {
		k := sig(ls.lset)
		for _, rs := range ones[k] {
			lb.Reset(ls.lset)
			if drop {
				lb.Del(labels.MetricName, "__type__", "__unit__")
			}
			if m.Card == parser.CardOneToOne {
				if m.On {
					lb.Keep(m.MatchingLabels...)
				} else {
					lb.Del(m.MatchingLabels...)
				}
			}
			for _, ln := range m.Include {
				if v := rs.lset.Get(ln); v != "" {
					lb.Set(ln, v)
				} else {
					lb.Del(ln)
				}
			}
			metric := lb.Labels()
			group := k
			if m.Card != parser.CardOneToOne {
				group = k + "\xff" + metric.String()
			}
			seen := matched[group]
			if seen == nil {
				seen = make([]bool, n)
				matched[group] = seen
			}
			v := ev.r.newValues(n)
			for i, lf := range ls.v {
				rf := rs.v[i]
				if isAbsent(lf) || isAbsent(rf) {
					continue
				}
				if seen[i] {
					return val{}, unsupported("multiple matches for labels %s", metric)
				}
				seen[i] = true
				if swapped {
					lf, rf = rf, lf
				}
				if r, keep := result(e, lf, rf); keep {
					v[i] = r
				}
			}
			out = append(out, &series{lset: metric, v: v})
		}
	}
	res, err := merge(out)
	return val{vec: res}, err
}

// overlap says whether two of the series have a value at the same step.
func overlap(in []*series, n int) bool {
	seen := make([]bool, n)
	for _, s := range in {
		for i, v := range s.v {
			if isAbsent(v) {
				continue
			}
			if seen[i] {
				return true
			}
			seen[i] = true
		}
	}
	return false
}
