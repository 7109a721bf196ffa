package healthz

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestListenerServesOnlyProbes: the unauthenticated listener answers the
// two probes with their checks' outcome and nothing else.
func TestListenerServesOnlyProbes(t *testing.T) {
	var readyErr error
	s, err := Listen("127.0.0.1:0", Handler(func() error { return nil }, func() error { return readyErr }))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(slog.New(slog.DiscardHandler)) }()
	defer func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + s.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		path     string
		readyErr error
		code     int
		body     string
	}{
		{"/healthz", nil, 200, "ok"},
		{"/readyz", nil, 200, "ok"},
		{"/readyz", errors.New("kubelet down"), 503, "unhealthy: kubelet down"},
		{"/metrics", nil, 404, ""},
		{"/", nil, 404, ""},
	}
	for _, tt := range tests {
		readyErr = tt.readyErr
		code, body := get(tt.path)
		if code != tt.code || !strings.Contains(body, tt.body) {
			t.Errorf("GET %s = %d %q, want %d %q", tt.path, code, body, tt.code, tt.body)
		}
	}
}

func TestListenNamesFlag(t *testing.T) {
	if _, err := Listen("not-an-address", http.NotFoundHandler()); err == nil || !strings.Contains(err.Error(), "--web.health-address") {
		t.Errorf("Listen(bad) = %v, want an error naming --web.health-address", err)
	}
}
