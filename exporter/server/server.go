// Package server wires the exporter's HTTP endpoints: the landing page,
// the telemetry path and /healthz. TLS and basic auth are added around it by
// exporter-toolkit, so nothing here knows about them.
package server

import (
	"fmt"
	"net/http"

	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
)

// Options configure the HTTP handler.
type Options struct {
	TelemetryPath string
	// Metrics serves the exposition (collector.Sampler.Handler).
	Metrics http.Handler
	// Healthy returns nil when the exporter is doing its job.
	Healthy func() error
}

// Handler returns the exporter's mux.
func Handler(o Options) (http.Handler, error) {
	if o.TelemetryPath == "" {
		o.TelemetryPath = "/metrics"
	}
	mux := http.NewServeMux()
	mux.Handle(o.TelemetryPath, o.Metrics)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := o.Healthy(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "unhealthy: %v\n", err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	if o.TelemetryPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "gpulens-exporter",
			Description: "GPU metrics from NVML, attributed to Kubernetes pods",
			Version:     version.Info(),
			Links: []web.LandingLinks{
				{Address: o.TelemetryPath, Text: "Metrics"},
				{Address: "/healthz", Text: "Health"},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("landing page: %w", err)
		}
		mux.Handle("/", landing)
	}
	return mux, nil
}
