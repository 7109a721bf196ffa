package signals_test

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/gpulens/gpulens/signals"
)

// TestRatioOfParts: one packed vector gives each team's num over den, 0
// where num is 0.
func TestRatioOfParts(t *testing.T) {
	db := loadFixtures(t, filepath.Join("testdata", "ratio.prom"))
	packed := signals.SumBy([]string{"team", signals.LabelPart}, signals.Pack([2]string{"used", "part_used"}, [2]string{"held", "part_held"}))
	got := map[string]float64{}
	for _, r := range query(t, db, signals.RatioOfParts([]string{"team"}, "used", "held", packed), []string{"team"}) {
		got[r.labels] = r.value
	}
	for team, want := range map[string]float64{"team=a": 0.75, "team=b": 0} {
		if math.Abs(got[team]-want) > 1e-12 {
			t.Errorf("%s: %v, want %v", team, got[team], want)
		}
	}
	if len(got) != 2 {
		t.Errorf("%v: want two teams", got)
	}
}

// TestUnusedOverWindowUse: an allocation with a window use used its
// weight's sum times it, whatever its per-step use, at least nothing
// unused; the others held less used; without a window use, all of them.
func TestUnusedOverWindowUse(t *testing.T) {
	db := loadFixtures(t, filepath.Join("testdata", "ratio.prom"))
	w := &signals.WindowUse{Key: []string{"pod"}, Weight: "alloc * 0 + 1", Used: "window_use"}
	for _, tt := range []struct {
		name string
		w    *signals.WindowUse
		want map[string]float64
	}{
		{"window use", w, map[string]float64{"pod=hami": 0.3, "pod=hami-busy": 0, "pod=plain": 0.15}},
		{"none", nil, map[string]float64{"pod=hami": 0.1, "pod=hami-busy": 0.4, "pod=plain": 0.15}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rows := query(t, db, signals.UnusedOver("alloc", "used", "1m", "1m", tt.w), []string{"pod"})
			if len(rows) != len(tt.want) {
				t.Fatalf("%v, want %v", rows, tt.want)
			}
			for _, r := range rows {
				if math.Abs(r.value-tt.want[r.labels]) > 1e-12 {
					t.Errorf("%s: %v unused, want %v", r.labels, r.value, tt.want[r.labels])
				}
			}
		})
	}
}
