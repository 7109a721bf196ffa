package source

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// thanosPartial is the warning Thanos Query v0.42 adds to an answer when one of
// its stores (here a sidecar that stopped) failed and partial responses are
// enabled, as it is by default: the series of the other stores come back
// with status "success".
const thanosPartial = `fetch series for {cluster="b"} Addr: 127.0.0.1:42011 MinTime: 1772409600000 MaxTime: 9223372036854775807: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:42011: connect: connection refused"`

func warningBody(t *testing.T, resultType string, result any, warnings ...string) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{
		"status":   "success",
		"data":     map[string]any{"resultType": resultType, "result": result},
		"warnings": warnings,
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestRemotePartialResponseFails: an answer whose warnings say a store
// failed fails the call, for instant and range queries and the metric-name
// listing, with an error that names the server and quotes the warning with
// secrets redacted; it is not retried, since the store stays down for
// longer than a backoff.
func TestRemotePartialResponseFails(t *testing.T) {
	tokenFile := writeSecret(t, "token", testToken)
	vector := []any{map[string]any{"metric": map[string]string{"gpu": "0"}, "value": []any{1700000000, "0.5"}}}
	matrix := []any{map[string]any{"metric": map[string]string{"gpu": "0"}, "values": []any{[]any{1700000000, "0.5"}}}}
	warning := thanosPartial + " (token " + testToken + ")"
	calls := []struct {
		name string
		body string
		call func(r *Remote) error
	}{
		{"query", warningBody(t, "vector", vector, warning), func(r *Remote) error {
			_, err := r.Query(context.Background(), "up", time.Unix(1700000000, 0))
			return err
		}},
		{"range query", warningBody(t, "matrix", matrix, warning), func(r *Remote) error {
			_, err := r.QueryRange(context.Background(), "up", time.Unix(1700000000, 0), time.Unix(1700000600, 0), time.Minute)
			return err
		}},
		{"metric names", func() string {
			b, _ := json.Marshal(map[string]any{"status": "success", "data": []string{"up"}, "warnings": []string{warning}})
			return string(b)
		}(), func(r *Remote) error {
			_, err := r.MetricNames(context.Background(), time.Unix(0, 0), time.Unix(1700000000, 0))
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			fake := &fakeProm{responses: []fakeResponse{{status: 200, body: c.body}}}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			r, err := NewRemote(RemoteOptions{URL: srv.URL, BearerTokenFile: tokenFile, Retries: 2, Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			err = c.call(r)
			var perr *PartialResponseError
			if !errors.As(err, &perr) {
				t.Fatalf("err = %v, want a *PartialResponseError", err)
			}
			msg := err.Error()
			for _, want := range []string{srv.URL, "partial", `{cluster="b"}`, "connection refused", "<redacted>"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, testToken) {
				t.Errorf("error %q leaks the token", msg)
			}
			if n := fake.calls.Load(); n != 1 {
				t.Errorf("%d requests, want 1: a partial answer is not retried", n)
			}
		})
	}
}

// TestRemotePromQLAnnotationsPass: PromQL's own annotations are about the
// evaluation, not about missing data, and only logged; a front's warning
// among them still fails the call.
func TestRemotePromQLAnnotationsPass(t *testing.T) {
	vector := []any{map[string]any{"metric": map[string]string{"gpu": "0"}, "value": []any{1700000000, "0.5"}}}
	annotations := []string{
		"PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: \"gpulens_gpu_energy_joules\"",
		"PromQL warning: encountered a mix of histograms and floats for metric name \"x\"",
	}
	for _, tc := range []struct {
		name     string
		warnings []string
		partial  bool
	}{
		{"annotations only", annotations, false},
		{"annotations and a store's failure", append(append([]string{}, annotations...), thanosPartial), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(&fakeProm{responses: []fakeResponse{{status: 200, body: warningBody(t, "vector", vector, tc.warnings...)}}})
			defer srv.Close()
			var logs bytes.Buffer
			r, err := NewRemote(RemoteOptions{URL: srv.URL, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			vec, err := r.Query(context.Background(), "up", time.Unix(1700000000, 0))
			var perr *PartialResponseError
			if got := errors.As(err, &perr); got != tc.partial {
				t.Fatalf("err = %v, want partial %v", err, tc.partial)
			}
			if tc.partial {
				if len(perr.Warnings) != 1 || perr.Warnings[0] != thanosPartial {
					t.Errorf("warnings %q, want only the store's", perr.Warnings)
				}
				return
			}
			if len(vec) != 1 || vec[0].Value != 0.5 {
				t.Errorf("result %v, want the one sample", vec)
			}
			if !strings.Contains(logs.String(), "might not be a counter") {
				t.Errorf("annotation not logged: %q", logs.String())
			}
		})
	}
}
