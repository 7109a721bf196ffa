package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/source"
)

// checkFirstSample asks a real store where its first sample is, over a
// window of ten years ending at the fixture's end: the analysis starts
// there (analyzer/session/window.go). The store's index answers by block
// (Prometheus, Thanos: at most a 2h block early) or by day
// (VictoriaMetrics: at most a day early), never late.
func checkFirstSample(t *testing.T, src source.Source, earliest time.Duration) {
	t.Helper()
	fs, ok := src.(source.FirstSampler)
	if !ok {
		t.Fatalf("%T is not a source.FirstSampler", src)
	}
	first, ok, err := fs.FirstSample(context.Background(), simEnd.Add(-3650*24*time.Hour), simEnd, time.Hour)
	if err != nil || !ok {
		t.Fatalf("FirstSample: %s, %v, %v", first, ok, err)
	}
	if first.After(simStart) || first.Before(simStart.Add(-earliest)) {
		t.Errorf("first sample at %s, want in [%s, %s]", first, simStart.Add(-earliest), simStart)
	}
	if _, ok, err := fs.FirstSample(context.Background(), simEnd.Add(24*time.Hour), simEnd.Add(48*time.Hour), time.Hour); ok || err != nil {
		t.Errorf("a window after the data: ok %v, err %v", ok, err)
	}
}
