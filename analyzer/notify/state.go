package notify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// StateMaxAge is how old a state file may be and still be restored: after
// an hour away, the alerts it holds are history, and the first analysis
// says what is active.
const StateMaxAge = time.Hour

// state is what a state file holds: every alert being sent, active or
// recently resolved, with the times that make it the same alert to
// Alertmanager after a restart (its startsAt) or a resolved one (its
// resolvedAt).
type state struct {
	Version int           `json:"version"`
	SavedAt time.Time     `json:"saved_at"`
	Alerts  []stateRecord `json:"alerts"`
}

type stateRecord struct {
	Alert      Alert     `json:"alert"`
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
}

const stateVersion = 1

// snapshot is the tracker's state at now.
func (t *Tracker) snapshot(now time.Time) state {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := state{Version: stateVersion, SavedAt: now, Alerts: make([]stateRecord, 0, len(t.alerts))}
	for _, tr := range t.alerts {
		st.Alerts = append(st.Alerts, stateRecord{Alert: tr.alert, ResolvedAt: tr.resolvedAt})
	}
	return st
}

// restore puts the alerts of st back, as they were when it was saved.
func (t *Tracker) restore(st state) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range st.Alerts {
		if len(r.Alert.Labels) == 0 {
			continue
		}
		t.alerts[Fingerprint(r.Alert.Labels)] = &tracked{alert: r.Alert, resolvedAt: r.ResolvedAt}
	}
	return len(t.alerts)
}

// saveState writes st to path atomically: a temporary file in the same
// directory, synced, then renamed over the old one, so that a crash
// mid-write leaves the old state, never half of the new.
func saveState(path string, st state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// loadState reads path; a missing file is no state. A file that is not a
// state file is an error naming it (quoting nothing of it).
func loadState(path string) (state, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return state{}, false, nil
	}
	if err != nil {
		return state{}, false, err
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil || st.Version != stateVersion {
		return state{}, false, fmt.Errorf("%s is not a gpulens serve state file (version %d)", path, stateVersion)
	}
	return st, true, nil
}
