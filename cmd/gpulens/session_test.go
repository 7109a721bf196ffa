package main

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/session"
)

// TestServeOpensOneSessionPerCycle: the session opened at start-up to check
// the flags serves the first cycle, and every later cycle opens one; a
// session opens its TSDB once (the session package's test), so a cycle
// replays the head once, and 'gpulens report' once per command.
func TestServeOpensOneSessionPerCycle(t *testing.T) {
	var opened atomic.Int64
	defer func(open func(context.Context, session.Config) (*session.Session, error)) { openSession = open }(openSession)
	openSession = func(ctx context.Context, cfg session.Config) (*session.Session, error) {
		opened.Add(1)
		return session.Open(ctx, cfg)
	}
	base, _ := startServe(t, "--interval", "1s")
	// Ready means the first analysis is done, on the start-up session.
	if n := opened.Load(); n != 1 {
		t.Errorf("%d sessions opened by the first analysis, want 1", n)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for analyses(t, base) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("fewer than 3 analyses in 2 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// A cycle opens its session before it finishes: between two reads of
	// the finished count, the sessions opened lie within one of it.
	before := analyses(t, base)
	n := opened.Load()
	after := analyses(t, base)
	if n < before || n > after+1 {
		t.Errorf("%d sessions opened while %d..%d analyses finished, want one per analysis", n, before, after)
	}
}

// analyses is how many analyses serve has finished, by its own metric.
func analyses(t *testing.T, base string) int64 {
	t.Helper()
	var n int64
	for line := range strings.Lines(httpGet(t, base+"/metrics")) {
		if rest, ok := strings.CutPrefix(line, "gpulens_serve_analyses_total{"); ok {
			f := strings.Fields(rest)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			n += int64(v)
		}
	}
	return n
}
