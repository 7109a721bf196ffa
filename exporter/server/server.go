// Package server wires the exporter's HTTP endpoints: the landing page,
// the telemetry path, /healthz and /readyz. TLS and basic auth are added
// around it by exporter-toolkit, so nothing here knows about them; Probes
// is what the separate health listener (--web.health-address) serves.
package server

import (
	"fmt"
	"net/http"

	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/gpulens/gpulens/internal/healthz"
)

// Options configure the HTTP handler.
type Options struct {
	TelemetryPath string
	// Metrics serves the exposition (collector.Sampler.Handler).
	Metrics http.Handler
	// Healthy returns nil when the exporter is doing its job (liveness).
	Healthy func() error
	// Ready returns nil when scrapes get the whole picture (readiness);
	// Healthy when nil.
	Ready func() error
}

// Probes serves /healthz and /readyz only.
func Probes(o Options) http.Handler {
	if o.Ready == nil {
		o.Ready = o.Healthy
	}
	return healthz.Handler(o.Healthy, o.Ready)
}

// Handler returns the exporter's mux.
func Handler(o Options) (http.Handler, error) {
	if o.TelemetryPath == "" {
		o.TelemetryPath = "/metrics"
	}
	mux := http.NewServeMux()
	mux.Handle(o.TelemetryPath, o.Metrics)
	probes := Probes(o)
	mux.Handle("/healthz", probes)
	mux.Handle("/readyz", probes)
	if o.TelemetryPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "gpulens-exporter",
			Description: "GPU metrics from NVML, attributed to Kubernetes pods",
			Version:     version.Info(),
			Links: []web.LandingLinks{
				{Address: o.TelemetryPath, Text: "Metrics"},
				{Address: "/healthz", Text: "Health"},
				{Address: "/readyz", Text: "Readiness"},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("landing page: %w", err)
		}
		mux.Handle("/", landing)
	}
	return mux, nil
}
