package query

import (
	"slices"

	"github.com/gpulens/gpulens/signals"

	"github.com/prometheus/prometheus/promql/parser"
)

// Query shapes. A schema's expressions are usually themselves aggregations
// (Native.Utilization is max by (UsageLabels) (...)), and the query set
// aggregates them again by a coarser key. Each aggregation level costs a
// pass over every series at every one of the window's steps (10,080 at a
// week of minutes), so the two helpers below drop a level where that
// provably cannot change the answer. They only ever look at the outermost
// node of the schema's expression; anything they do not recognise is used
// as written.

var promqlParser = parser.NewParser(parser.Options{})

// maxBy is "max by (labels) (expr)". When expr is "max by (G) (inner)"
// with labels ⊆ G, it is "max by (labels) (inner)": the maximum of
// per-group maxima is the maximum over all members (Prometheus's max skips
// NaN unless all values are NaN, which also composes), and the groups by
// labels are the same whether formed from inner's series or from G's.
func maxBy(labels []string, expr string) string {
	return signals.MaxBy(labels, unwrapMax(labels, expr))
}

// maxOverTime is max_over_time of maxBy(labels, expr) over the window,
// written as "max by (labels) (max_over_time((inner)[range:step]))": the
// largest value over steps and series is the same whichever is maximised
// first, and this order spares the engine an aggregation at each of the
// window's steps and a second series × steps matrix.
func (a *analysis) maxOverTime(labels []string, expr string) string {
	return signals.MaxBy(labels, a.over(signals.MaxOverTime, unwrapMax(labels, expr)))
}

// unwrapMax is inner when expr is "max by (G) (inner)" with labels ⊆ G,
// and expr otherwise.
func unwrapMax(labels []string, expr string) string {
	if agg, ok := outerAggregation(expr); ok && agg.Op == parser.MAX && groupsBy(agg, labels) {
		return text(expr, agg.Expr)
	}
	return expr
}

// presence is an expression that has a series with the given labels at a
// step exactly when expr does, for the right-hand side of "and on (labels)":
// "and" only asks whether a match exists, never for its value. An
// aggregation by a superset of labels has a group exactly when one of its
// input series is present, so it can be skipped. Only aggregations that
// output one series per non-empty group qualify (not topk, quantile's NaN
// aside, nor count_values, which splits by value).
func presence(labels []string, expr string) string {
	if agg, ok := outerAggregation(expr); ok && groupsBy(agg, labels) {
		switch agg.Op {
		case parser.MAX, parser.MIN, parser.SUM, parser.COUNT, parser.AVG, parser.GROUP:
			return text(expr, agg.Expr)
		}
	}
	return "(" + expr + ")"
}

// outerAggregation is expr's outermost node when it is an aggregation with
// "by" and no parameter.
func outerAggregation(expr string) (*parser.AggregateExpr, bool) {
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		return nil, false
	}
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			break
		}
		e = p.Expr
	}
	agg, ok := e.(*parser.AggregateExpr)
	if !ok || agg.Without || agg.Param != nil {
		return nil, false
	}
	return agg, true
}

// groupsBy says whether agg groups by every one of labels.
func groupsBy(agg *parser.AggregateExpr, labels []string) bool {
	for _, l := range labels {
		if !slices.Contains(agg.Grouping, l) {
			return false
		}
	}
	return true
}

// text is the text of node within expr, as the schema wrote it.
func text(expr string, node parser.Node) string {
	r := node.PositionRange()
	return "(" + expr[r.Start:r.End] + ")"
}
