package signals

import "strconv"

// Fn is a PromQL function that takes a range or a subquery. The analysis,
// the rules and the dashboards name one by its constant, never by a
// string, so a grep finds every reader of a shape and a typo does not
// compile (TestNoPromQLOutsideSignals holds the string form out).
type Fn string

// The range functions gpulens reads with (PromQL's function docs:
// https://prometheus.io/docs/prometheus/latest/querying/functions/).
const (
	AvgOverTime   Fn = "avg_over_time"
	MinOverTime   Fn = "min_over_time"
	MaxOverTime   Fn = "max_over_time"
	SumOverTime   Fn = "sum_over_time"
	CountOverTime Fn = "count_over_time"
	LastOverTime  Fn = "last_over_time"
	Changes       Fn = "changes"
	Increase      Fn = "increase"
	Deriv         Fn = "deriv"
	PredictLinear Fn = "predict_linear"
)

// Since is the seconds from the instant expr holds (a Unix time in
// seconds) to the evaluation's: "time() - expr".
func Since(expr string) string { return "time() - " + expr }

// Above, AtLeast, Below and Equal are expr compared with v, as a filter:
// the series of expr whose value holds it, with their values.
func Above(expr string, v float64) string   { return expr + " > " + Num(v) }
func AtLeast(expr string, v float64) string { return expr + " >= " + Num(v) }
func Below(expr string, v float64) string   { return expr + " < " + Num(v) }
func Equal(expr string, v float64) string   { return expr + " == " + Num(v) }

// Num is v as PromQL writes a number: the shortest decimal that reads
// back as v.
func Num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// IdleHour is "idle for the last hour": the series of expr (a use, 0–1)
// whose average over the trailing hour, at the rules' resolution, is below
// the threshold. It is the one meaning of "idle now" that the rules (held
// for criteria's MinHeldHours by their `for`) and the fleet dashboard's
// idle panels share, both of each allocation's use of its share
// (Schema.Utilization), never the whole GPU's load. The other readings
// have names of their own: the idle-allocation finding (analyzer/findings)
// judges the whole window's average against the same threshold and
// min_held_hours; gpulens reclaim's policy (analyzer/reclaim, its idle.*
// keys) judges a window of its own with stricter bounds.
func IdleHour(expr string, below float64) string {
	return Below(Subquery(AvgOverTime, expr, "1h", RuleStep), below)
}

// IdleHourRecorded is IdleHour of a recorded series, by its name or a
// selector of it: the
// average over the raw samples of the hour, which a recording rule
// already evaluates at the rules' resolution.
func IdleHourRecorded(name string, below float64) string {
	return Below(Range(AvgOverTime, name, "1h"), below)
}
