package collector

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os/exec"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/internal/testenv"
)

func scrapeHandler(t *testing.T, gz bool) []byte {
	t.Helper()
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}, Node: "node-a"})
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	live := prometheus.NewRegistry()
	live.MustRegister(s.SelfCollector())
	req := httptest.NewRequest("GET", "/metrics", nil)
	if gz {
		req.Header.Set("Accept-Encoding", "deflate, gzip;q=1.0")
	}
	rec := httptest.NewRecorder()
	s.Handler(live, slog.New(slog.DiscardHandler)).ServeHTTP(rec, req)
	if got := rec.Header().Get("Content-Type"); got != string(textFormat) {
		t.Errorf("Content-Type %q", got)
	}
	body := rec.Body.Bytes()
	if gz {
		if rec.Header().Get("Content-Encoding") != "gzip" {
			t.Fatal("gzip was accepted but not used")
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		// Go's reader, like Prometheus', reads concatenated members.
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return body
}

func TestHandlerServesCachedAndLiveFamilies(t *testing.T) {
	for _, gz := range []bool{false, true} {
		body := scrapeHandler(t, gz)
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("gzip=%v: exposition does not parse: %v", gz, err)
		}
		for _, name := range []string{"gpulens_gpu_up", "gpulens_mig_info", "gpulens_exporter_collections_total"} {
			if _, ok := mfs[name]; !ok {
				t.Errorf("gzip=%v: %s missing", gz, name)
			}
		}
		if n := len(mfs["gpulens_gpu_up"].GetMetric()); n != 4 {
			t.Errorf("gzip=%v: %d gpulens_gpu_up series, want 4", gz, n)
		}
	}
}

func TestHandlerBeforeFirstSample(t *testing.T) {
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}})
	live := prometheus.NewRegistry()
	live.MustRegister(s.SelfCollector())
	rec := httptest.NewRecorder()
	s.Handler(live, slog.New(slog.DiscardHandler)).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 || bytes.Contains(rec.Body.Bytes(), []byte("gpulens_gpu_")) {
		t.Errorf("code %d, body has device series before any sample:\n%s", rec.Code, rec.Body.Bytes())
	}
}

func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(scrapeHandler(t, false))
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
