package query

import (
	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/scan"
)

// stepSeries is one series of a pass at every step of the window: v[i]
// is its value at the window's step i, or no value (scan.IsAbsent). The
// passes fold values by step index, never by timestamp: the scan hands
// over its own arrays this way (scan.RangeSteps), and a range query's
// answer is placed on the same steps (stepsOfMatrix).
type stepSeries struct {
	metric model.Metric
	v      []float64
}

// passAnswer is a pass's series, each with a value at one step at least,
// sorted by labels as a range query's; release, where the scan lent the
// arrays, gives them back once the pass has folded them.
type passAnswer struct {
	series  []stepSeries
	release func()
}

// stepsOfScan is a scan's answer as a pass's, its arrays still lent.
func stepsOfScan(st *scan.Steps) passAnswer {
	out := make([]stepSeries, len(st.Series))
	for i, s := range st.Series {
		out[i] = stepSeries{metric: s.Metric(), v: s.V}
	}
	return passAnswer{series: out, release: st.Release}
}

// stepsOfMatrix places a range query's points on the window's steps; a
// point off the window (none, from queryWindow) is dropped, and a series
// left without one.
func stepsOfMatrix(mat model.Matrix, w fleet.Window) passAnswer {
	first, step, n := firstStep(w), w.Step.Milliseconds(), w.ExpectedSteps()
	out := make([]stepSeries, 0, len(mat))
	for _, s := range mat {
		var v []float64
		for _, p := range s.Values {
			ts := int64(p.Timestamp)
			if ts < first || (ts-first)/step >= int64(n) {
				continue
			}
			if v == nil {
				v = make([]float64, n)
				scan.FillAbsent(v)
			}
			v[(ts-first)/step] = float64(p.Value)
		}
		if v != nil {
			out = append(out, stepSeries{metric: s.Metric, v: v})
		}
	}
	return passAnswer{series: out}
}

// present is the number of steps with a value.
func present(v []float64) int {
	n := 0
	for _, f := range v {
		if !scan.IsAbsent(f) {
			n++
		}
	}
	return n
}

// lastStep is the last step with a value, -1 for none.
func lastStep(v []float64) int {
	for i := len(v) - 1; i >= 0; i-- {
		if !scan.IsAbsent(v[i]) {
			return i
		}
	}
	return -1
}

// points is v as a range query's points, for the folds written over them.
func (a *analysis) points(v []float64) []model.SamplePair {
	first, step := firstStep(a.w), a.w.Step.Milliseconds()
	out := make([]model.SamplePair, 0, present(v))
	for i, f := range v {
		if !scan.IsAbsent(f) {
			out = append(out, model.SamplePair{Timestamp: model.Time(first + int64(i)*step), Value: model.SampleValue(f)})
		}
	}
	return out
}

// stepTime is the timestamp of step i of the window.
func (a *analysis) stepTime(i int) model.Time {
	return model.Time(firstStep(a.w) + int64(i)*a.w.Step.Milliseconds())
}
