// Package healthz serves the liveness (/healthz) and readiness (/readyz)
// probes of both binaries, and the listener of their own they can be
// served on (--web.health-address) without the TLS and basic auth of the
// main listener's web config: Kubernetes' httpGet probes send no
// credentials and cannot verify a certificate, and exporter-toolkit cannot
// exempt a path from its web config. Only the two probes are served there,
// and they reveal no more than ok or why not.
package healthz

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Check returns nil when the probe passes, else why it does not.
type Check func() error

// Probe answers 200 "ok" when check passes, else 503 with the reason.
func Probe(check Check) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := check(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "unhealthy: %v\n", err)
			return
		}
		fmt.Fprintln(w, "ok")
	}
}

// Handler serves GET /healthz (live) and GET /readyz (ready), nothing else.
func Handler(live, ready Check) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", Probe(live))
	mux.Handle("GET /readyz", Probe(ready))
	return mux
}

// Server is the probes' own plain-HTTP listener.
type Server struct {
	srv *http.Server
	lis net.Listener
}

// Listen binds addr (host:port) for h. The caller runs Serve and Shutdown.
func Listen(addr string, h http.Handler) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--web.health-address %s: %w", addr, err)
	}
	return &Server{lis: lis, srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}}, nil
}

// Addr is the address bound.
func (s *Server) Addr() net.Addr { return s.lis.Addr() }

// Serve serves until Shutdown; it logs and returns any other failure.
func (s *Server) Serve(logger *slog.Logger) error {
	logger.Info("serving probes without TLS or auth", "address", s.lis.Addr().String(), "paths", "/healthz /readyz")
	if err := s.srv.Serve(s.lis); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("health listener %s: %w", s.lis.Addr(), err)
	}
	return nil
}

// Shutdown stops the listener, waiting for probes in flight until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
