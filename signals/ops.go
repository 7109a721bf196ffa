package signals

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/vocab"
)

// The operators, selectors and Grafana query functions that the rules
// and the dashboards glue signals' forms with. Written here, so that no
// Go outside signals/ spells an operator or a matcher as a string
// (TestNoPromQLOutsideSignals) and a grep of a form finds every reader.
// Each writes exactly the operator between its operands, no parentheses:
// PromQL's precedence is the caller's to keep, with Paren where needed.

// Div, Mul, Sub and Add are "a / b", "a * b", "a - b" and "a + b", one to
// one between series of the same labels (or with a scalar).
func Div(a, b string) string { return a + " / " + b }
func Mul(a, b string) string { return a + " * " + b }
func Sub(a, b string) string { return a + " - " + b }
func Add(a, b string) string { return a + " + " + b }

// Or is "a or b": a's series, and b's where a has none with their labels.
func Or(a, b string) string { return a + " or " + b }

// Paren is "(expr)".
func Paren(expr string) string { return "(" + expr + ")" }

// Zero is "0 * expr": expr's series, each 0; ZeroOne is "0 * expr + 1",
// each 1: a series' presence, with its labels.
func Zero(expr string) string    { return Mul("0", expr) }
func ZeroOne(expr string) string { return Add(Zero(expr), "1") }

// Zeroed and Oned are Zero and ZeroOne written the other way about,
// "expr * 0" and "expr * 0 + 1", as the dashboards' panels have them.
// Not the same where expr's top level binds looser than "*" (the two
// differ on the demo's held-but-unused panel: TestPanelsReturnData's
// recorded forms are "expr * 0").
func Zeroed(expr string) string { return Mul(expr, "0") }
func Oned(expr string) string   { return Add(Zeroed(expr), "1") }

// Monthly is an hourly figure (dollars or GPUs an hour) for the 730-hour
// month that every monthly cost and saving is priced for
// (vocab.HoursPerMonth): "hourly * 730".
func Monthly(hourly string) string { return Mul(hourly, strconv.Itoa(vocab.HoursPerMonth)) }

// MinutesToHours is a sum of one-minute steps (a sum_over_time at the
// analyzer's one-minute resolution: GPU-minutes) in hours: "(expr / 60)".
func MinutesToHours(expr string) string { return Paren(Div(expr, "60")) }

// SecondsToHours is seconds in hours: "expr / 3600".
func SecondsToHours(expr string) string { return Div(expr, "3600") }

// A Matcher is one label matcher of a selector: `label="value"`,
// `label=~"regex"`.
type Matcher string

// MatchEq and MatchRe are `label="value"` and `label=~"regex"`, the
// value quoted as PromQL reads a string.
func MatchEq(label, value string) Matcher { return Matcher(label + "=" + strconv.Quote(value)) }
func MatchRe(label, regex string) Matcher { return Matcher(label + "=~" + strconv.Quote(regex)) }

// MatchAnyOf is MatchRe of values, any of them literally: `label=~"a|b"`,
// each value's regex metacharacters escaped, so that a value is never
// read as a pattern.
func MatchAnyOf(label string, values ...string) Matcher {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = regexp.QuoteMeta(v)
	}
	return MatchRe(label, strings.Join(quoted, "|"))
}

// Matchers is a selector's braces of ms: `{a="x", b=~"y"}`; appended to a
// metric's name, that metric's series that match them all.
func Matchers(ms ...Matcher) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = string(m)
	}
	return "{" + strings.Join(s, ", ") + "}"
}

// Select is the series of metric that match ms: `metric{a="x"}`.
func Select(metric string, ms ...Matcher) string { return metric + Matchers(ms...) }

// QueryResult and LabelValues are Grafana's Prometheus data source's
// variable queries: every series of an instant query, and the values of
// a label on a selector's series
// (https://grafana.com/docs/grafana/latest/datasources/prometheus/template-variables/).
func QueryResult(expr string) string { return "query_result(" + expr + ")" }
func LabelValues(sel, label string) string {
	return "label_values(" + sel + ", " + label + ")"
}
