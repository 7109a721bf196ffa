package collector

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
)

// TestProbes: liveness fails when no GPU of the node answered (a wedged
// library, which a restart clears), not when one is lost; readiness also
// needs a GPU and, with attribution on, the kubelet.
func TestProbes(t *testing.T) {
	allDown := func(s *gpu.Snapshot) {
		for i := range s.Devices {
			s.Devices[i].Up, s.Devices[i].Err = false, "timed out after 5s"
		}
	}
	yes, no := true, false
	tests := []struct {
		name        string
		edit        func(*gpu.Snapshot)
		kubelet     *bool // nil: attribution off
		wantHealthy string
		wantReady   string
	}{
		{name: "one GPU lost", edit: func(*gpu.Snapshot) {}},
		{name: "every GPU hung", edit: allDown, wantHealthy: "none of the 4 GPUs answered", wantReady: "none of the 4 GPUs answered"},
		{name: "no GPU on the node", edit: func(s *gpu.Snapshot) { s.Devices = nil }, wantReady: "no GPU answered"},
		{name: "kubelet up", edit: func(*gpu.Snapshot) {}, kubelet: &yes},
		{name: "kubelet down", edit: func(*gpu.Snapshot) {}, kubelet: &no, wantReady: "kubelet pod-resources API"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := testSnapshot()
			tt.edit(snap)
			o := Options{Backend: &fakeBackend{snap: snap}, Node: "n"}
			if tt.kubelet != nil {
				a := testAttribution(t)
				if !*tt.kubelet {
					a.Allocations = func() *podresources.Allocations { return nil }
				}
				o.Attribution = a
			}
			s := New(o)
			if err := s.SampleOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			check := func(probe string, err error, want string) {
				t.Helper()
				if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
					t.Errorf("%s = %v, want %q", probe, err, want)
				}
			}
			check("Healthy", s.Healthy(), tt.wantHealthy)
			check("Ready", s.Ready(), tt.wantReady)
		})
	}
}

// TestReattributeOnKubeletChange: when the kubelet client signals a change,
// Run serves the latest sample attributed anew at once, without reading the
// GPUs again: podresources_up 0 and no container series the moment the
// kubelet stops answering, though the next collection is an hour away.
func TestReattributeOnKubeletChange(t *testing.T) {
	fb := &fakeBackend{snap: testSnapshot()}
	a := testAttribution(t)
	good := a.Allocations
	var down atomic.Bool
	a.Allocations = func() *podresources.Allocations {
		if down.Load() {
			return nil
		}
		return good()
	}
	changed := make(chan struct{}, 1)
	a.Changed = changed
	s := New(Options{Backend: fb, Node: "n", Attribution: a, Interval: time.Hour})
	live := prometheus.NewRegistry()
	h := s.Handler(live, nil)
	scrape := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() { cancel(); <-done }()

	waitUntil := func(what string, ok func(string) bool) {
		t.Helper()
		for range 2000 {
			if ok(scrape()) {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s:\n%s", what, scrape())
	}
	waitUntil("attribution", func(b string) bool {
		return strings.Contains(b, "gpulens_exporter_podresources_up 1") && strings.Contains(b, "gpulens_container_gpu_allocation_ratio{")
	})
	down.Store(true)
	changed <- struct{}{}
	waitUntil("stale attribution dropped", func(b string) bool {
		return strings.Contains(b, "gpulens_exporter_podresources_up 0") && !strings.Contains(b, "gpulens_container_")
	})
	if err := s.Ready(); err == nil {
		t.Error("ready with the kubelet down")
	}
	down.Store(false)
	changed <- struct{}{}
	waitUntil("attribution back", func(b string) bool {
		return strings.Contains(b, "gpulens_exporter_podresources_up 1") && strings.Contains(b, "gpulens_container_gpu_allocation_ratio{")
	})
	fb.mu.Lock()
	calls := fb.calls
	fb.mu.Unlock()
	if calls != 1 {
		t.Errorf("the backend was read %d times, want 1: re-attribution must not read the GPUs", calls)
	}
}
