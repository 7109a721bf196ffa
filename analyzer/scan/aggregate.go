package scan

import (
	"math"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/kahansum"
)

// aggregate is sum, max, min, count or group by (or without) labels. Each
// input series' group is found once; the values are then folded per step
// in the input's order, with the engine's rules: the first value starts a
// group, max and min replace a NaN, sum is a Kahan sum.
func (ev *evaluator) aggregate(e *parser.AggregateExpr) (val, error) {
	switch e.Op {
	case parser.SUM, parser.MAX, parser.MIN, parser.COUNT, parser.GROUP:
	default:
		return val{}, unsupported("aggregation %s", e.Op)
	}
	if e.Param != nil {
		return val{}, unsupported("aggregation %s with a parameter", e.Op)
	}
	in, err := ev.vector(e.Expr)
	if err != nil {
		return val{}, err
	}
	// The groups first: a group of one series is that series' values
	// under the group's labels (the max, min or sum of one value is the
	// value), shared rather than copied, which is most groups of the
	// passes (max by an allocation's labels).
	var out []*series
	var members [][]*series
	groups := map[uint64][]int{}
	lb := labels.NewBuilder(labels.EmptyLabels())
	for _, s := range in {
		lb.Reset(s.lset)
		if e.Without {
			lb.Del(e.Grouping...)
			lb.Del(labels.MetricName, "__type__", "__unit__")
		} else {
			lb.Keep(e.Grouping...)
		}
		gl := lb.Labels()
		h := gl.Hash()
		gi := -1
		for _, j := range groups[h] {
			if labels.Equal(out[j].lset, gl) {
				gi = j
			}
		}
		if gi < 0 {
			gi = len(out)
			groups[h] = append(groups[h], gi)
			out = append(out, &series{lset: gl})
			members = append(members, nil)
		}
		members[gi] = append(members[gi], s)
	}
	for gi, g := range out {
		if len(members[gi]) == 1 && (e.Op == parser.MAX || e.Op == parser.MIN || e.Op == parser.SUM) {
			g.v = members[gi][0].v
			continue
		}
		g.v = fold(e.Op, members[gi], ev.g.N, ev.r)
	}
	return val{vec: out}, nil
}

// fold is one group's aggregation, step by step in the members' order.
func fold(op parser.ItemType, members []*series, n int, r *reader) []float64 {
	acc := r.newValues(n)
	var comp []float64 // Kahan compensation of a sum
	if op == parser.SUM {
		comp = r.buffer(n)
		clear(comp)
	}
	for _, s := range members {
		for i, f := range s.v {
			if isAbsent(f) {
				continue
			}
			cur := acc[i]
			if isAbsent(cur) {
				switch op {
				case parser.COUNT, parser.GROUP:
					acc[i] = 1
				default:
					acc[i] = f
				}
				continue
			}
			switch op {
			case parser.SUM:
				acc[i], comp[i] = kahansum.Inc(f, cur, comp[i])
			case parser.MAX:
				if cur < f || math.IsNaN(cur) {
					acc[i] = f
				}
			case parser.MIN:
				if cur > f || math.IsNaN(cur) {
					acc[i] = f
				}
			case parser.COUNT:
				acc[i] = cur + 1
			}
		}
	}
	for i, c := range comp {
		if !isAbsent(acc[i]) {
			acc[i] += c
		}
	}
	return acc
}
