package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandlerRoutes(t *testing.T) {
	var healthErr error
	h, err := Handler(Options{
		TelemetryPath: "/custom-metrics",
		Metrics:       http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "gpulens_gpu_up 1\n") }),
		Healthy:       func() error { return healthErr },
	})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get("/custom-metrics"); code != 200 || body != "gpulens_gpu_up 1\n" {
		t.Errorf("telemetry path: %d %q", code, body)
	}
	if code, body := get("/"); code != 200 || !strings.Contains(body, "/custom-metrics") {
		t.Errorf("landing page must link the telemetry path: %d\n%s", code, body)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("healthy: %d %q", code, body)
	}
	healthErr = errors.New("last collection is stale: 35s old (interval 10s)")
	if code, body := get("/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "stale") {
		t.Errorf("unhealthy: %d %q, want 503 with the reason", code, body)
	}
}
