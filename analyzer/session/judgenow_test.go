package session

import (
	"testing"
	"time"
)

// TestJudgeNow: a one-shot command without --until reads the window up
// to the store's last sample (a copied TSDB reads as it was); serve and
// reclaim judge the fleet now (Flags.JudgeNow), where a store that stopped
// is stale data, not a window moved back to where it ends; --until is a
// window the user named, never moved.
func TestJudgeNow(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		judgeNow bool
		until    string
		want     bool
	}{
		{name: "report", want: true},
		{name: "serve", judgeNow: true, want: false},
		{name: "report --until", until: "2026-12-01T00:00:00Z", want: false},
		{name: "serve --until", judgeNow: true, until: "2026-12-01T00:00:00Z", want: false},
	} {
		f := Flags{Since: "7d", Step: time.Minute, Until: tc.until, JudgeNow: tc.judgeNow, NoKubernetes: true}
		cfg, err := f.Config(now, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if cfg.EndAtLastSample != tc.want {
			t.Errorf("%s: EndAtLastSample %v, want %v", tc.name, cfg.EndAtLastSample, tc.want)
		}
	}
}
