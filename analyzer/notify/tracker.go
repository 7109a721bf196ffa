package notify

import (
	"slices"
	"sync"
	"time"
)

// ResolvedResendFor is how long a resolved alert keeps being sent: an
// Alertmanager that was down when the finding went away, or missed the
// batch, still learns of it.
const ResolvedResendFor = 15 * time.Minute

// Tracker remembers each alert's lifecycle between analyses: when it
// started, and when it resolved.
type Tracker struct {
	mu sync.Mutex
	// validity is how far ahead an active alert's endsAt is set.
	validity time.Duration
	alerts   map[string]*tracked
}

type tracked struct {
	alert      Alert
	resolvedAt time.Time // zero while active
}

// NewTracker returns a tracker whose active alerts are valid for four
// resend intervals, Prometheus's choice: three resends can be lost before
// Alertmanager resolves an alert on its own.
func NewTracker(resend time.Duration) *Tracker {
	return &Tracker{validity: 4 * resend, alerts: map[string]*tracked{}}
}

// Update records the alerts that are active now. An alert seen before
// keeps its startsAt; a new one, or one that resolved and came back,
// starts now. An active alert missing from current resolves now.
func (t *Tracker) Update(now time.Time, current []Alert) {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := make(map[string]bool, len(current))
	for _, a := range current {
		fp := Fingerprint(a.Labels)
		seen[fp] = true
		old, ok := t.alerts[fp]
		if ok && old.resolvedAt.IsZero() {
			a.StartsAt = old.alert.StartsAt
		} else {
			a.StartsAt = now
		}
		t.alerts[fp] = &tracked{alert: a}
	}
	for fp, tr := range t.alerts {
		if !seen[fp] && tr.resolvedAt.IsZero() {
			tr.resolvedAt = now
		}
	}
	t.prune(now)
}

// Pending are the alerts to send now: every active one, valid until
// now + 4 × the resend interval, and every one resolved in the last
// ResolvedResendFor, ending when it resolved. Sorted by labels, so that
// batches are reproducible.
func (t *Tracker) Pending(now time.Time) []Alert {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prune(now)
	keys := make([]string, 0, len(t.alerts))
	for fp := range t.alerts {
		keys = append(keys, fp)
	}
	slices.Sort(keys)
	out := make([]Alert, 0, len(keys))
	for _, fp := range keys {
		tr := t.alerts[fp]
		a := tr.alert
		if tr.resolvedAt.IsZero() {
			a.EndsAt = now.Add(t.validity)
		} else {
			a.EndsAt = tr.resolvedAt
		}
		out = append(out, a)
	}
	return out
}

// Counts are the active and resolved alerts being sent.
func (t *Tracker) Counts() (active, resolved int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tr := range t.alerts {
		if tr.resolvedAt.IsZero() {
			active++
		} else {
			resolved++
		}
	}
	return active, resolved
}

func (t *Tracker) prune(now time.Time) {
	for fp, tr := range t.alerts {
		if !tr.resolvedAt.IsZero() && now.Sub(tr.resolvedAt) > ResolvedResendFor {
			delete(t.alerts, fp)
		}
	}
}
