package podresources

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/gpulens/gpulens/exporter/podresources/podresourcestest"
	"github.com/gpulens/gpulens/signals/native"
)

// TestShortOutagesSeenAtOnce: six 2-second kubelet outages, each starting
// just after a refresh, with an Interval far longer than the outage. Each
// is seen within a second of the kubelet going (Up false, no snapshot,
// Changed signalled, one more unreachable failure counted), and each
// recovery within a few seconds. Before, the next refresh was an Interval
// away and waited for the kubelet to come back, so none was seen.
func TestShortOutagesSeenAtOnce(t *testing.T) {
	list, alloc := loadFixture(t, "whole-gpus")
	sock := socketPath(t)
	srv := podresourcestest.Start(t, sock, list, alloc)
	c := New(Options{Socket: sock, Interval: time.Hour, Timeout: 5 * time.Second, Logger: slog.New(&logRecorder{})})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, "first refresh", c.Up)
	drain(c.Changed())

	for i := range 6 {
		before := counterValue(t, c, native.ExporterPodResourcesRefreshFailures, ReasonUnreachable)
		stopped := time.Now()
		srv.Stop()
		waitWithin(t, time.Second, "outage seen", func() bool { return !c.Up() })
		if c.Snapshot() != nil {
			t.Fatalf("outage %d: the snapshot of a gone kubelet is still served", i)
		}
		if got := counterValue(t, c, native.ExporterPodResourcesRefreshFailures, ReasonUnreachable); got <= before {
			t.Errorf("outage %d: refresh_failures_total{reason=unreachable} = %v, want > %v", i, got, before)
		}
		select {
		case <-c.Changed():
		default:
			t.Errorf("outage %d: Changed not signalled", i)
		}
		t.Logf("outage %d seen after %v", i, time.Since(stopped).Round(time.Millisecond))
		time.Sleep(2*time.Second - time.Since(stopped))
		srv.Restart()
		back := time.Now()
		waitWithin(t, 3*time.Second, "recovery", c.Up)
		t.Logf("recovery %d after %v", i, time.Since(back).Round(time.Millisecond))
		drain(c.Changed())
	}
}

func drain(ch <-chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
