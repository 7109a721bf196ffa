package serve

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gpulens/gpulens/internal/healthz"
)

// Handler serves /metrics, the JSON API and the probes.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = s.WriteMetrics(w)
	})
	mux.HandleFunc("GET /api/v1/report", func(w http.ResponseWriter, _ *http.Request) {
		snap, ok := s.snapshot(w)
		if ok {
			_, _ = w.Write(snap.report)
		}
	})
	mux.HandleFunc("GET /api/v1/findings", func(w http.ResponseWriter, _ *http.Request) {
		snap, ok := s.snapshot(w)
		if !ok {
			return
		}
		_ = json.NewEncoder(w).Encode(findingsResponse{
			GeneratedAt: snap.at.UTC(), WindowStart: snap.window.Start, WindowEnd: snap.window.End,
			Stale: s.stale.Load(), Findings: json.RawMessage(snap.findings),
		})
	})
	probes := s.Probes()
	mux.Handle("GET /healthz", probes)
	mux.Handle("GET /readyz", probes)
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><head><title>gpulens</title></head><body><h1>gpulens serve</h1><ul>
<li><a href="/api/v1/report">/api/v1/report</a></li><li><a href="/api/v1/findings">/api/v1/findings</a></li>
<li><a href="/metrics">/metrics</a></li><li><a href="/readyz">/readyz</a></li></ul></body></html>`))
	})
	return mux
}

// Probes serves /healthz and /readyz only: the main listener serves them
// too, and --web.health-address serves this alone, without the web
// config's TLS and basic auth, for Kubernetes' probes.
func (s *Service) Probes() http.Handler {
	// Live while the process answers: restarting it would not make an
	// unreachable Prometheus answer, so analysis failures belong in /readyz.
	return healthz.Handler(func() error { return nil }, func() error {
		if !s.Ready() {
			return errors.New("no successful analysis within three intervals")
		}
		return nil
	})
}

// findingsResponse wraps the findings with when they were computed; the
// report keeps the exact form of 'gpulens report -o json', so its
// staleness travels in headers instead.
type findingsResponse struct {
	GeneratedAt time.Time       `json:"generated_at"`
	WindowStart time.Time       `json:"window_start"`
	WindowEnd   time.Time       `json:"window_end"`
	Stale       bool            `json:"stale"`
	Findings    json.RawMessage `json:"findings"`
}

// snapshot sets the JSON headers and returns the current analysis, or
// answers 503 when there is none yet.
func (s *Service) snapshot(w http.ResponseWriter) (*snapshot, bool) {
	snap := s.current.Load()
	if snap == nil {
		http.Error(w, "no analysis has completed yet", http.StatusServiceUnavailable)
		return nil, false
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Gpulens-Generated-At", snap.at.UTC().Format(time.RFC3339))
	w.Header().Set("X-Gpulens-Stale", strconv.FormatBool(s.stale.Load()))
	return snap, true
}
