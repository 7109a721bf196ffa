package notify

import (
	"testing"
	"time"
)

func TestTrackerLifecycle(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	a := Alert{Labels: map[string]string{"alertname": "A"}}
	b := Alert{Labels: map[string]string{"alertname": "B"}}
	type want struct {
		name             string
		startsAt, endsAt time.Time
	}
	steps := []struct {
		desc    string
		at      time.Duration
		update  bool
		current []Alert
		want    []want
	}{
		{"both fire", 0, true, []Alert{a, b},
			[]want{{"A", t0, t0.Add(4 * time.Minute)}, {"B", t0, t0.Add(4 * time.Minute)}}},
		{"the next analysis keeps startsAt", 15 * time.Minute, true, []Alert{b, a},
			[]want{{"A", t0, t0.Add(19 * time.Minute)}, {"B", t0, t0.Add(19 * time.Minute)}}},
		{"B goes away: it ends when it went", 30 * time.Minute, true, []Alert{a},
			[]want{{"A", t0, t0.Add(34 * time.Minute)}, {"B", t0, t0.Add(30 * time.Minute)}}},
		{"a resend keeps the resolved one", 44 * time.Minute, false, nil,
			[]want{{"A", t0, t0.Add(48 * time.Minute)}, {"B", t0, t0.Add(30 * time.Minute)}}},
		{"after 15 minutes it is no longer sent", 45*time.Minute + time.Second, false, nil,
			[]want{{"A", t0, t0.Add(49*time.Minute + time.Second)}}},
		{"B comes back: it starts again", 50 * time.Minute, true, []Alert{a, b},
			[]want{{"A", t0, t0.Add(54 * time.Minute)}, {"B", t0.Add(50 * time.Minute), t0.Add(54 * time.Minute)}}},
		{"everything resolves", time.Hour, true, nil,
			[]want{{"A", t0, t0.Add(time.Hour)}, {"B", t0.Add(50 * time.Minute), t0.Add(time.Hour)}}},
	}
	tr := NewTracker(time.Minute)
	for _, s := range steps {
		now := t0.Add(s.at)
		if s.update {
			tr.Update(now, s.current)
		}
		got := tr.Pending(now)
		if len(got) != len(s.want) {
			t.Fatalf("%s: %d pending, want %d: %+v", s.desc, len(got), len(s.want), got)
		}
		for i, w := range s.want {
			g := got[i]
			if g.Labels["alertname"] != w.name || !g.StartsAt.Equal(w.startsAt) || !g.EndsAt.Equal(w.endsAt) {
				t.Errorf("%s: got %s %s–%s, want %s %s–%s", s.desc, g.Labels["alertname"], g.StartsAt.Format(time.TimeOnly),
					g.EndsAt.Format(time.TimeOnly), w.name, w.startsAt.Format(time.TimeOnly), w.endsAt.Format(time.TimeOnly))
			}
		}
	}
}
