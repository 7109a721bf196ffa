package query

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/scan"
)

// na marks a step without a value in the tables below.
var na = math.Float64frombits(0x7ff0000000000002)

func TestStepsOfMatrix(t *testing.T) {
	// Steps at 60 s, 120 s, ..., 300 s: five of them.
	w := fleet.Window{Start: time.Unix(30, 0), End: time.Unix(300, 0), Step: time.Minute}
	if first, n := w.Grid(); first.Unix() != 60 || n != 5 {
		t.Fatalf("grid: first %v, %d steps; the test assumes 60 s and 5", first.Unix(), n)
	}
	at := func(sec int64, v float64) model.SamplePair {
		return model.SamplePair{Timestamp: model.Time(sec * 1000), Value: model.SampleValue(v)}
	}
	mat := model.Matrix{
		{Metric: model.Metric{"s": "a"}, Values: []model.SamplePair{at(0, 9), at(60, 1), at(180, math.NaN()), at(300, 3), at(360, 9)}},
		{Metric: model.Metric{"s": "off"}, Values: []model.SamplePair{at(0, 9), at(360, 9)}},
		{Metric: model.Metric{"s": "b"}, Values: []model.SamplePair{at(240, 4)}},
	}
	got := stepsOfMatrix(mat, w).series
	want := []struct {
		name string
		v    []float64
	}{
		{"a", []float64{1, na, math.NaN(), na, 3}},
		{"b", []float64{na, na, na, 4, na}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d series, want %d (a series without a point in the window is left out)", len(got), len(want))
	}
	for i, w := range want {
		if string(got[i].metric["s"]) != w.name || !sameSteps(got[i].v, w.v) {
			t.Errorf("series %d: got %s %v, want %s %v", i, got[i].metric, got[i].v, w.name, w.v)
		}
	}
}

func TestCombine(t *testing.T) {
	c := &combiner{n: 4}
	tests := []struct {
		name   string
		series [][]float64
		agg    aggregation
		want   []float64
	}{
		{"one series is itself", [][]float64{{1, na, 3, na}}, aggSum, []float64{1, na, 3, na}},
		{"sum where any has a value", [][]float64{{1, na, 3, na}, {na, 2, 4, na}}, aggSum, []float64{1, 2, 7, na}},
		{"max, a NaN loses to a value", [][]float64{{math.NaN(), na, 5, 1}, {2, na, 4, math.NaN()}}, aggMax, []float64{2, na, 5, 1}},
		{"max of NaNs is NaN", [][]float64{{math.NaN(), na, na, na}, {math.NaN(), na, na, na}}, aggMax, []float64{math.NaN(), na, na, na}},
		// Kahan: 1e16 + 1 + 1 is 1e16 + 2 only with the compensation.
		{"sum compensated", [][]float64{{1e16, na, na, na}, {1, na, na, na}, {1, na, na, na}}, aggSum, []float64{1e16 + 2, na, na, na}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.combine(tt.series, tt.agg); !sameSteps(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			steps, peak := c.count(tt.series)
			wantSteps, wantPeak := 0, 0
			for i := range c.n {
				n := 0
				for _, s := range tt.series {
					if !scan.IsAbsent(s[i]) {
						n++
					}
				}
				if n > 0 {
					wantSteps++
				}
				wantPeak = max(wantPeak, n)
			}
			if steps != wantSteps || peak != wantPeak {
				t.Errorf("count: %d steps, peak %d; want %d and %d", steps, peak, wantSteps, wantPeak)
			}
		})
	}
}

func TestFoldsSkipAbsentSteps(t *testing.T) {
	v := []float64{na, 2, na, 4, 6, na}
	if got := sumOverTime(v); got != 12 {
		t.Errorf("sum: %v", got)
	}
	if got := avgOverTime(v); got != 4 {
		t.Errorf("avg: %v", got)
	}
	if got := maxOverTime(v); got != 6 {
		t.Errorf("max: %v", got)
	}
	if got := lastOverTime(v); got != 6 {
		t.Errorf("last: %v", got)
	}
	if got := quantileOverTime(0.5, v); got != 4 {
		t.Errorf("median: %v", got)
	}
	// Values 2, 4, 6 at steps 1, 3 and 4 of a minute: the fit through
	// (0, 2), (120, 4), (180, 6) has slope Sxy/Sxx with nā = 100, ȳ = 4:
	// ((-100)(-2) + 20·0 + 80·2) / (100² + 20² + 80²) = 360 / 16800.
	if got, ok := deriv(v, 60_000); !ok || math.Abs(got-360.0/16800) > 1e-12*360.0/16800 {
		t.Errorf("deriv: %v %v", got, ok)
	}
	if _, ok := deriv([]float64{na, 1, na}, 60_000); ok {
		t.Error("deriv of one value must have no answer")
	}
	if got := stepsOf(v); got.and(stepsOf([]float64{1, 1, 1, na, 1, 1})) != 2 {
		t.Errorf("steps in both: %d, want 2 (steps 1 and 4)", got.and(stepsOf([]float64{1, 1, 1, na, 1, 1})))
	}
}

// sameSteps compares step arrays bit for bit where NaN, so that a value's
// NaN and a step without a value differ.
func sameSteps(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(p, q float64) bool {
		if math.IsNaN(p) || math.IsNaN(q) {
			return scan.IsAbsent(p) == scan.IsAbsent(q) && math.IsNaN(p) && math.IsNaN(q)
		}
		return p == q
	})
}
