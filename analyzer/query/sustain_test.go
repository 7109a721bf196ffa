package query

import (
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

func TestSustainedMax(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	at := func(vs ...float64) []model.SamplePair {
		var out []model.SamplePair
		for i, v := range vs {
			if v < 0 {
				continue // a gap
			}
			out = append(out, model.SamplePair{Timestamp: model.TimeFromUnixNano(t0.Add(time.Duration(i) * time.Minute).UnixNano()), Value: model.SampleValue(v)})
		}
		return out
	}
	end := t0.Add(time.Hour)
	for _, tt := range []struct {
		name string
		pts  []model.SamplePair
		n    int
		want float64
	}{
		{"steady", at(1, 1, 1, 1, 1, 1, 1, 1), 3, 1},
		{"a transient shorter than n", at(1, 1, 3, 3, 1, 1, 1, 1), 3, 1},
		{"a change that lasts n", at(1, 1, 3, 3, 3, 1, 1, 1), 3, 3},
		{"n = 1 is the max", at(1, 3, 1), 1, 3},
		// PromQL's min_over_time over the n steps ending at each step also
		// sees the windows that run past the last point: the last point's
		// value counts alone there (the engine's semantics, mirrored).
		{"the last point alone", at(1, 1, 1, 2), 3, 2},
		// A gap shortens the windows around it the same way.
		{"a value alone after a gap", at(1, 1, -1, -1, -1, 2, 1), 3, 2},
		{"short-lived series", at(2, 2), 6, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := sustainedMax(tt.pts, time.Minute, tt.n, end)
			if !ok || got != tt.want {
				t.Errorf("%v, %v; want %v", got, ok, tt.want)
			}
		})
	}
	if _, ok := sustainedMax(nil, time.Minute, 3, end); ok {
		t.Error("no points, but a value")
	}
}
