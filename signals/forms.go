package signals

import (
	"fmt"
	"strconv"
	"strings"
)

// The PromQL forms every reader composes a schema's signals with:
// aggregations, window functions, joins. The analysis, the rules and the
// dashboards build their expressions from these and write no PromQL of
// their own (TestNoPromQLOutsideSignals), so a shape is spelled once.

// Agg is op over expr by labels: "op by (a, b) (expr)", or "op(expr)"
// without labels.
func Agg(op string, labels []string, expr string) string {
	if len(labels) == 0 {
		return op + "(" + expr + ")"
	}
	return op + " by " + By(labels...) + " (" + expr + ")"
}

// MaxBy, SumBy, CountBy and GroupBy are Agg of max, sum, count and group.
func MaxBy(labels []string, expr string) string   { return Agg("max", labels, expr) }
func SumBy(labels []string, expr string) string   { return Agg("sum", labels, expr) }
func CountBy(labels []string, expr string) string { return Agg("count", labels, expr) }
func GroupBy(labels []string, expr string) string { return Agg("group", labels, expr) }

// Count and Sum are count(expr) and sum(expr), over every series.
func Count(expr string) string { return Agg("count", nil, expr) }
func Sum(expr string) string   { return Agg("sum", nil, expr) }

// OrZero is expr, or 0 where it has no series: a panel's count of
// nothing reads 0, not "no data".
func OrZero(expr string) string { return expr + " or vector(0)" }

// Subquery is fn over expr evaluated at every step of the trailing range
// rng: "fn((expr)[rng:step])"; fn is a *_over_time function or one of the
// same shape (deriv), with args after the range (predict_linear's
// horizon).
func Subquery(fn Fn, expr, rng, step string, args ...string) string {
	return SubqueryOffset(fn, expr, rng, step, "", args...)
}

// SubqueryOffset is Subquery moved back in time by offset, a PromQL
// duration ("1w"); none where it is empty.
func SubqueryOffset(fn Fn, expr, rng, step, offset string, args ...string) string {
	sub := "(" + expr + ")[" + rng + ":" + step + "]"
	if offset != "" {
		sub += " offset " + offset
	}
	return string(fn) + "(" + strings.Join(append([]string{sub}, args...), ", ") + ")"
}

// Quantile is quantile_over_time(q, ...) of expr over the subquery.
func Quantile(q float64, expr, rng, step string) string {
	return fmt.Sprintf("quantile_over_time(%g, (%s)[%s:%s])", q, expr, rng, step)
}

// Range is fn over the trailing range rng of a selector or a recorded
// series' name: "fn(sel[rng])", with args after the range
// (predict_linear's horizon).
func Range(fn Fn, sel, rng string, args ...string) string {
	return string(fn) + "(" + strings.Join(append([]string{sel + "[" + rng + "]"}, args...), ", ") + ")"
}

// Window is the Over of a trailing range rng at resolution step, whose
// Apply is Subquery: what a rule, a dashboard or the analysis passes a
// schema's windowed signals (Health, GPUAttribution).
func Window(rng, step string) Over {
	return Over{Range: rng, Step: step, Apply: func(fn Fn, e string) string { return Subquery(fn, e, rng, step) }}
}

// RuleStep is the rules' resolution of a subquery over a signal.
const RuleStep = "1m"

// RuleWindow is Window(rng, RuleStep): the rules' windowed signals.
func RuleWindow(rng string) Over { return Window(rng, RuleStep) }

// join is lhs op on (labels) rhs, with modifiers after the matching.
func join(lhs, op string, labels []string, rhs string) string {
	return lhs + " " + op + " on " + By(labels...) + " " + rhs
}

// AndOn is "lhs and on (labels) rhs": lhs where rhs has a series with
// the same labels.
func AndOn(lhs string, labels []string, rhs string) string { return join(lhs, "and", labels, rhs) }

// UnlessOn is "lhs unless on (labels) rhs".
func UnlessOn(lhs string, labels []string, rhs string) string {
	return join(lhs, "unless", labels, rhs)
}

// GroupLeft is "lhs op on (labels) group_left (extra) rhs": each series
// of lhs combined with the one of rhs that matches it, extra copied from
// rhs.
func GroupLeft(lhs, op string, labels []string, extra []string, rhs string) string {
	return lhs + " " + op + " on " + By(labels...) + " group_left " + By(extra...) + " " + rhs
}

// StepTime is, per series of expr, the evaluation's own instant in Unix
// seconds: its maximum over a window is the last step expr was seen at.
func StepTime(expr string) string { return "time() + 0 * " + expr }

// CountValues is "count_values by (labels) ("label", expr)": per group,
// one series per value of expr, the value in label.
func CountValues(label string, labels []string, expr string) string {
	return "count_values by " + By(labels...) + " (" + strconv.Quote(label) + ", " + expr + ")"
}
