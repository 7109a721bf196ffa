package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/internal/testenv"
)

// endlessProm answers every API call with a well-formed list that never
// ends, chunked (or, announcing, one whose Content-Length says 600 MB), as
// a broken proxy or endpoint might; remote read is refused, so the
// analysis asks the PromQL API. Where the client never hangs up the list
// ends at 64 MiB, so the test ends on a build without the limit too.
func endlessProm(t *testing.T, announce bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/read" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if announce {
			w.Header().Set("Content-Length", strconv.Itoa(600_000_000))
		}
		elem := bytes.Repeat([]byte(`"gpulens_gpu_info",`), 1000)
		if _, err := w.Write([]byte(`{"status":"success","data":[`)); err != nil {
			return
		}
		for sent.Load() < 64<<20 {
			n, err := w.Write(elem)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
		_, _ = w.Write([]byte(`"up"]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &sent
}

// TestReportOverTheReplyLimit guards issue 52 for the command a user runs:
// `gpulens report` against a store whose replies never end exits 3 (the
// source cannot be queried) with an error naming --query.max-reply-size
// and its limit, and a malformed size is a usage error naming the flag.
// On main at 36bc8ff there was no such flag (exit 2, "unknown flag"), and
// without it the report read every reply whole.
func TestReportOverTheReplyLimit(t *testing.T) {
	chunked, sent := endlessProm(t, false)
	announced, _ := endlessProm(t, true)
	for _, c := range []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr []string
	}{
		{name: "chunked", args: []string{"--prometheus-url", chunked.URL, "--query.max-reply-size", "1MiB"}, wantCode: exitUnreachable,
			wantStderr: []string{"prometheus at " + chunked.URL, "the reply to /api/v1/label/__name__/values is over the 1MiB limit of --query.max-reply-size"}},
		{name: "content-length", args: []string{"--prometheus-url", announced.URL}, wantCode: exitUnreachable,
			wantStderr: []string{"announces 600000000 bytes, over the 512MiB limit of --query.max-reply-size"}},
		{name: "bad unit", args: []string{"--prometheus-url", chunked.URL, "--query.max-reply-size", "12XB"}, wantCode: exitUsage,
			wantStderr: []string{`--query.max-reply-size: "12XB" is not a size such as 64MiB`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := execute(append([]string{"report", "--no-kubernetes", "-q"}, c.args...), &stdout, &stderr)
			if code != c.wantCode {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, c.wantCode, stderr.String())
			}
			for _, w := range c.wantStderr {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
	// The client hung up near the limit: what the server wrote beyond
	// it sat in the loopback's socket buffers.
	if n := sent.Load(); n >= 32<<20 {
		t.Errorf("the server wrote %d bytes: the report did not hang up at the 1 MiB limit", n)
	}
}

// TestServeOverTheReplyLimit guards issue 52 for serve: a store whose
// replies never end fails the cycle's analysis, which is logged with the
// limit's flag and counted, and serve stays up to try again next cycle,
// instead of reading until the kernel kills it (a restart loop). Serving
// the last good analysis after a failure is TestFailedAnalysisServesLast-
// GoodMarkedStale's (analyzer/serve). On main at 36bc8ff there was no
// such flag: serve refused to start.
func TestServeOverTheReplyLimit(t *testing.T) {
	prom, _ := endlessProm(t, false)
	addr := testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	root := newRootCmd(io.Discard, &stderr)
	root.SetArgs([]string{"serve", "--prometheus-url", prom.URL, "--query.max-reply-size", "1MiB", "--no-kubernetes", "--web.listen-address", addr})
	errc := make(chan error, 1)
	go func() { errc <- root.ExecuteContext(ctx) }()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "analysis failed") {
		select {
		case err := <-errc:
			t.Fatalf("serve exited: %v\n%s", err, stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed analysis after 60s:\n%s", stderr.String())
		}
	}
	if !strings.Contains(stderr.String(), "over the 1MiB limit of --query.max-reply-size") {
		t.Errorf("the failure's log line does not name the limit:\n%s", stderr.String())
	}
	if m := httpGet(t, "http://"+addr+"/metrics"); !strings.Contains(m, `gpulens_serve_analyses_total{result="failure"} 1`) {
		t.Errorf("the failure is not counted:\n%s", m)
	}
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("serve stopped with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
}
