package source

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

// The embedded source finds its first sample in its blocks' and head's
// bounds, read-write and read-only, without a query.
func TestEmbeddedFirstSample(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir, EmbeddedOptions{})
	from := t0.Add(30 * time.Hour)
	appendSeries(t, e, labels.FromStrings("__name__", "x"), from, from.Add(6*time.Hour), constant(1))
	if err := e.PersistHead(context.Background()); err != nil {
		t.Fatal(err)
	}
	appendSeries(t, e, labels.FromStrings("__name__", "x"), from.Add(6*time.Hour), from.Add(7*time.Hour), constant(1))
	check := func(name string, e *Embedded) {
		for _, tc := range []struct {
			start, end time.Time
			want       time.Time
			ok         bool
		}{
			{t0.Add(-3650 * 24 * time.Hour), from.Add(8 * time.Hour), from.Truncate(2 * time.Hour), true},
			{from.Add(time.Hour), from.Add(8 * time.Hour), from.Add(time.Hour), true},
			{t0, t0.Add(time.Hour), time.Time{}, false},
			{from.Add(8 * time.Hour), from.Add(9 * time.Hour), time.Time{}, false},
		} {
			got, ok, err := e.FirstSample(context.Background(), tc.start, tc.end, time.Hour)
			latest := from
			if tc.start.After(latest) {
				latest = tc.start
			}
			if err != nil || ok != tc.ok || (ok && (got.After(latest) || got.Before(tc.want))) {
				t.Errorf("%s: FirstSample(%s, %s) = %s, %v, %v; want %v and a time in [%s, %s]", name, tc.start, tc.end, got, ok, err, tc.ok, tc.want, latest)
			}
		}
	}
	check("read-write", e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	check("read-only", openTest(t, dir, EmbeddedOptions{ReadOnly: true}))
}

// The remote source halves the window over the label-values API, which a
// store answers from its index, to within the precision asked.
func TestRemoteFirstSample(t *testing.T) {
	first := time.Date(2026, 3, 14, 7, 30, 0, 0, time.UTC)
	end := time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)
	var probes atomic.Int32
	var globalIndex atomic.Bool // answer ranges over 40 days with every name, as VictoriaMetrics does
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/label/__name__/values" {
			http.Error(w, "unexpected "+r.URL.Path, http.StatusNotFound)
			return
		}
		probes.Add(1)
		_ = r.ParseForm()
		s, _ := strconv.ParseFloat(r.Form.Get("start"), 64)
		e, _ := strconv.ParseFloat(r.Form.Get("end"), 64)
		names := []string{}
		if (e >= float64(first.Unix()) && s <= float64(end.Unix())) || (globalIndex.Load() && e-s > 40*24*3600) {
			names = append(names, "gpulens_gpu_info")
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": names})
	}))
	defer srv.Close()
	r, err := NewRemote(RemoteOptions{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		start     time.Time
		ok        bool
		global    bool
		maxProbes int32
	}{
		{"ten years", end.Add(-3650 * 24 * time.Hour), true, false, 20},
		{"a week", end.Add(-7 * 24 * time.Hour), true, false, 20},
		{"data at the start", first.Add(-30 * time.Minute), true, false, 1},
		{"ten years, global index", end.Add(-3650 * 24 * time.Hour), true, true, 140},
		{"a year, global index", end.Add(-365 * 24 * time.Hour), true, true, 30},
	} {
		probes.Store(0)
		globalIndex.Store(tc.global)
		got, ok, err := r.FirstSample(context.Background(), tc.start, end, time.Hour)
		if err != nil || ok != tc.ok {
			t.Fatalf("%s: %s, %v, %v", tc.name, got, ok, err)
		}
		want := first.Add(-time.Hour)
		if tc.start.After(want) {
			want = tc.start
		}
		if got.After(first) || got.Before(want) {
			t.Errorf("%s: first sample %s, want in [%s, %s]", tc.name, got, want, first)
		}
		if n := probes.Load(); n > tc.maxProbes {
			t.Errorf("%s: %d probes", tc.name, n)
		}
	}
	globalIndex.Store(false)
	if _, ok, err := r.FirstSample(context.Background(), end.Add(24*time.Hour), end.Add(48*time.Hour), time.Hour); ok || err != nil {
		t.Errorf("a window after the data: ok %v, err %v", ok, err)
	}
}
