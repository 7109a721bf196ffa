package notify

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A restart neither resolves nor re-fires: the alerts of before it are
// sent at once by the new process, before its first analysis, with their
// startsAt and an endsAt in the future, and the first analysis keeps that
// startsAt. Without the state file the new process sent nothing until its
// first analysis and then fired every alert anew.
func TestStateFileCarriesAlertsAcrossRestart(t *testing.T) {
	var mu sync.Mutex
	var posts [][]Alert
	am := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var batch []Alert
		if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		posts = append(posts, batch)
		mu.Unlock()
	}))
	defer am.Close()
	stateFile := filepath.Join(t.TempDir(), "state.json")
	t0 := time.Date(2026, 3, 16, 10, 0, 0, 0, time.UTC)
	now := t0
	clock := func() time.Time { return now }
	idle := Alert{Labels: map[string]string{"alertname": "GPULensIdleGPU", "namespace": "ml"}}
	gone := Alert{Labels: map[string]string{"alertname": "GPULensIdleGPU", "namespace": "old"}}

	before, err := New(Options{URLs: []string{am.URL}, ResendInterval: time.Minute, StateFile: stateFile, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	before.Update([]Alert{idle, gone})
	now = t0.Add(5 * time.Minute)
	before.Update([]Alert{idle}) // gone resolves at t0+5m

	// Down for ten minutes: longer than the alerts' validity (4m).
	now = t0.Add(15 * time.Minute)
	after, err := New(Options{URLs: []string{am.URL}, ResendInterval: time.Hour, StateFile: stateFile, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel(t)
	done := make(chan struct{})
	go func() { after.Run(ctx); close(done) }()
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(posts) > 0 })
	mu.Lock()
	first := posts[len(posts)-1]
	mu.Unlock()
	got := map[string]Alert{}
	for _, a := range first {
		got[a.Labels["namespace"]] = a
	}
	if a, ok := got["ml"]; !ok || !a.StartsAt.Equal(t0) || !a.EndsAt.After(now) {
		t.Errorf("the active alert, sent before the first analysis: %+v (present %v), want startsAt %s and endsAt after %s", a, ok, t0, now)
	}
	if a, ok := got["old"]; !ok || !a.EndsAt.Equal(t0.Add(5*time.Minute)) {
		t.Errorf("the resolved alert: %+v (present %v), want endsAt %s", a, ok, t0.Add(5*time.Minute))
	}
	after.Update([]Alert{idle})
	if p := after.tracker.Pending(now); len(p) == 0 || !p[0].StartsAt.Equal(t0) {
		t.Errorf("after the first analysis: %+v, want startsAt %s kept", p, t0)
	}
	cancel()
	<-done

	// An hour and more later the state is history.
	now = t0.Add(2 * time.Hour)
	late, err := New(Options{URLs: []string{am.URL}, StateFile: stateFile, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if a, r := late.tracker.Counts(); a+r != 0 {
		t.Errorf("a state file of two hours ago restored %d alerts", a+r)
	}

	// A file that is not a state file is named, and not quoted.
	if err := os.WriteFile(stateFile, []byte("root:SECRETHASH:19000\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = New(Options{URLs: []string{am.URL}, StateFile: stateFile, Now: clock})
	if err == nil || !strings.Contains(err.Error(), stateFile) || strings.Contains(err.Error(), "SECRETHASH") {
		t.Errorf("a corrupt state file: %v", err)
	}
}
