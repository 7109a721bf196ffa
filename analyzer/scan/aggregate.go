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
	n := ev.r.g.N
	var out []*series
	var comp [][]float64 // Kahan compensation of sums, per group
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
			out = append(out, &series{lset: gl, v: newValues(n)})
			if e.Op == parser.SUM {
				comp = append(comp, make([]float64, n))
			}
		}
		acc := out[gi].v
		for i, f := range s.v {
			if isAbsent(f) {
				continue
			}
			cur := acc[i]
			if isAbsent(cur) {
				switch e.Op {
				case parser.COUNT, parser.GROUP:
					acc[i] = 1
				default:
					acc[i] = f
				}
				continue
			}
			switch e.Op {
			case parser.SUM:
				acc[i], comp[gi][i] = kahansum.Inc(f, cur, comp[gi][i])
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
	if e.Op == parser.SUM {
		for gi, s := range out {
			for i, c := range comp[gi] {
				if !isAbsent(s.v[i]) {
					s.v[i] += c
				}
			}
		}
	}
	return val{vec: out}, nil
}
