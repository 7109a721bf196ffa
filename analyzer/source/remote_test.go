package source

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

const testToken = "s3cr3t-t0ken-value"

// fakeProm answers /api/v1/query and /api/v1/label/__name__/values like
// Prometheus, after an optional per-test check of the request. Responses
// are scripted: the n-th request gets responses[min(n, len-1)].
type fakeProm struct {
	calls     atomic.Int32
	check     func(r *http.Request) error
	responses []fakeResponse
}

type fakeResponse struct {
	status int
	body   string
	delay  time.Duration
	// cutAt > 0 declares the whole body's length but sends only its first
	// cutAt bytes before the connection closes, as a server that dies
	// mid-answer does.
	cutAt int
}

const okVector = `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"gpu":"0"},"value":[1700000000,"0.5"]}]}}`

func (f *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.calls.Add(1)) - 1
	if f.check != nil {
		if err := f.check(r); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	resp := fakeResponse{status: 200, body: okVector}
	if len(f.responses) > 0 {
		resp = f.responses[min(n, len(f.responses)-1)]
	}
	if r.URL.Path == "/api/v1/label/__name__/values" && len(f.responses) == 0 {
		resp.body = `{"status":"success","data":["DCGM_FI_DEV_FB_USED","up"]}`
	}
	if resp.delay > 0 {
		select {
		case <-time.After(resp.delay):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if resp.cutAt > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(resp.body)))
		w.WriteHeader(resp.status)
		_, _ = w.Write([]byte(resp.body[:resp.cutAt]))
		return // net/http closes a connection whose body fell short
	}
	w.WriteHeader(resp.status)
	_, _ = w.Write([]byte(resp.body))
}

func writeSecret(t testing.TB, name, v string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(v+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRemoteAuthAndTransport(t *testing.T) {
	pki := newTestPKI(t)
	tokenFile := writeSecret(t, "token", testToken)
	passFile := writeSecret(t, "password", "hunter2-pass")

	tests := []struct {
		name  string
		tls   bool
		opts  func(o *RemoteOptions)
		check func(r *http.Request) error
	}{
		{
			name: "bearer token from file",
			opts: func(o *RemoteOptions) { o.BearerTokenFile = tokenFile },
			check: func(r *http.Request) error {
				if got := r.Header.Get("Authorization"); got != "Bearer "+testToken {
					return fmt.Errorf("authorization %q", got)
				}
				return nil
			},
		},
		{
			name: "basic auth",
			opts: func(o *RemoteOptions) { o.BasicAuthUser, o.BasicAuthPasswordFile = "analyzer", passFile },
			check: func(r *http.Request) error {
				if u, p, ok := r.BasicAuth(); !ok || u != "analyzer" || p != "hunter2-pass" {
					return fmt.Errorf("basic auth %q %q %v", u, p, ok)
				}
				return nil
			},
		},
		{
			name: "extra headers",
			opts: func(o *RemoteOptions) { o.Headers = map[string]string{"X-Scope-OrgID": "team-a"} },
			check: func(r *http.Request) error {
				if got := r.Header.Get("X-Scope-OrgID"); got != "team-a" {
					return fmt.Errorf("X-Scope-OrgID %q", got)
				}
				return nil
			},
		},
		{
			name: "TLS with CA and client certificate",
			tls:  true,
			opts: func(o *RemoteOptions) { o.CAFile, o.CertFile, o.KeyFile = pki.caFile, pki.clientCert, pki.clientKey },
			check: func(r *http.Request) error {
				if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || r.TLS.PeerCertificates[0].Subject.CommonName != "client" {
					return errors.New("no client certificate")
				}
				return nil
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeProm{check: tt.check}
			srv := httptest.NewUnstartedServer(fake)
			if tt.tls {
				cert, err := tls.LoadX509KeyPair(pki.serverCert, pki.serverKey)
				if err != nil {
					t.Fatal(err)
				}
				srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: pki.pool, ClientAuth: tls.RequireAndVerifyClientCert}
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()

			o := RemoteOptions{URL: srv.URL}
			tt.opts(&o)
			r, err := NewRemote(o)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			vec, err := r.Query(context.Background(), "up", time.Unix(1700000000, 0))
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			if len(vec) != 1 || vec[0].Value != 0.5 || vec[0].Metric["gpu"] != "0" {
				t.Errorf("Query = %v, want gpu 0 at 0.5", vec)
			}
			names, err := r.MetricNames(context.Background(), time.Unix(0, 0), time.Unix(1700000000, 0))
			if err != nil || !slices.Equal(names, []string{"DCGM_FI_DEV_FB_USED", "up"}) {
				t.Errorf("MetricNames = %v, %v", names, err)
			}
		})
	}
}

func TestRemoteTLSRejectsUnknownCA(t *testing.T) {
	pki := newTestPKI(t)
	fake := &fakeProm{}
	srv := httptest.NewUnstartedServer(fake)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	r, err := NewRemote(RemoteOptions{URL: srv.URL, CAFile: pki.caFile, Retries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Query(context.Background(), "up", time.Now()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Query against a server of another CA = %v, want a certificate error", err)
	}
	if fake.calls.Load() != 0 {
		t.Error("request reached a server whose certificate failed verification")
	}
}

func TestRemoteErrorsAndRetries(t *testing.T) {
	tests := []struct {
		name      string
		responses []fakeResponse
		opts      RemoteOptions
		wantCalls int32
		wantErr   []string // substrings; nil means success
	}{
		{
			name:      "503 then success is retried",
			responses: []fakeResponse{{status: 503, body: "overloaded"}, {status: 200, body: okVector}},
			opts:      RemoteOptions{Retries: 3},
			wantCalls: 2,
		},
		{
			name:      "429 is retried",
			responses: []fakeResponse{{status: 429, body: "slow down"}, {status: 200, body: okVector}},
			opts:      RemoteOptions{Retries: 1},
			wantCalls: 2,
		},
		{
			name:      "persistent 503 gives up after retries",
			responses: []fakeResponse{{status: 503, body: "overloaded"}},
			opts:      RemoteOptions{Retries: 2},
			wantCalls: 3,
			wantErr:   []string{"query failed: 503 Service Unavailable: overloaded"},
		},
		{
			name:      "no retries configured",
			responses: []fakeResponse{{status: 500, body: "boom"}},
			wantCalls: 1,
			wantErr:   []string{"500 Internal Server Error: boom"},
		},
		{
			name:      "400 bad query is not retried",
			responses: []fakeResponse{{status: 400, body: `{"status":"error","errorType":"bad_data","error":"1:5: parse error: unclosed left parenthesis"}`}},
			opts:      RemoteOptions{Retries: 3},
			wantCalls: 1,
			wantErr:   []string{"query failed: 400 Bad Request: 1:5: parse error: unclosed left parenthesis"},
		},
		{
			name:      "422 execution error is not retried",
			responses: []fakeResponse{{status: 422, body: `{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory"}`}},
			opts:      RemoteOptions{Retries: 3},
			wantCalls: 1,
			wantErr:   []string{"422 Unprocessable Entity", "too many samples"},
		},
		{
			name:      "timeout",
			responses: []fakeResponse{{status: 200, body: okVector, delay: 2 * time.Second}},
			opts:      RemoteOptions{Timeout: 50 * time.Millisecond, Retries: 3},
			wantCalls: 1,
			wantErr:   []string{"query failed", "deadline exceeded"},
		},
		{
			name:      "slow answer within the timeout",
			responses: []fakeResponse{{status: 200, body: okVector, delay: 300 * time.Millisecond}},
			opts:      RemoteOptions{Timeout: 5 * time.Second, Retries: 2},
			wantCalls: 1,
		},
		{
			name:      "connection cut mid-body is retried",
			responses: []fakeResponse{{status: 200, body: okVector, cutAt: len(okVector) / 2}, {status: 200, body: okVector}},
			opts:      RemoteOptions{Retries: 2},
			wantCalls: 2,
		},
		{
			name:      "connection cut mid-body every time gives up",
			responses: []fakeResponse{{status: 200, body: okVector, cutAt: 10}},
			opts:      RemoteOptions{Retries: 2},
			wantCalls: 3,
			wantErr:   []string{"query failed", "unexpected EOF"},
		},
		{
			// A complete answer that is not JSON is the server's (or a
			// proxy's) answer: asking again gets the same.
			name:      "truncated JSON in a complete answer is reported, not retried",
			responses: []fakeResponse{{status: 200, body: okVector[:len(okVector)-20]}},
			opts:      RemoteOptions{Retries: 2},
			wantCalls: 1,
			wantErr:   []string{"query failed"},
		},
		{
			name:      "503 with an API error body, then success",
			responses: []fakeResponse{{status: 503, body: `{"status":"error","errorType":"unavailable","error":"TSDB not ready"}`}, {status: 200, body: okVector}},
			opts:      RemoteOptions{Retries: 1},
			wantCalls: 2,
		},
		{
			name:      "echoed token is redacted",
			responses: []fakeResponse{{status: 502, body: "upstream rejected Authorization: Bearer " + testToken}},
			wantCalls: 1,
			wantErr:   []string{"502 Bad Gateway", "Bearer <redacted>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeProm{responses: tt.responses}
			srv := httptest.NewServer(fake)
			defer srv.Close()
			o := tt.opts
			o.URL = srv.URL
			o.BearerTokenFile = writeSecret(t, "token", testToken)
			if o.Backoff == 0 {
				o.Backoff = time.Millisecond
			}
			r, err := NewRemote(o)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Query(context.Background(), "sum(up", time.Now())
			if got := fake.calls.Load(); got != tt.wantCalls {
				t.Errorf("server saw %d calls, want %d", got, tt.wantCalls)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Query: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Query succeeded, want an error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "prometheus at "+srv.URL+": ") {
				t.Errorf("error %q does not name the server", msg)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
			if strings.Contains(msg, testToken) {
				t.Errorf("error %q leaks the bearer token", msg)
			}
		})
	}
}

func TestRemoteNetworkErrorIsRetried(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more: connection refused

	var logs bytes.Buffer
	r, err := NewRemote(RemoteOptions{URL: url, Retries: 2, Backoff: time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Query(context.Background(), "up", time.Now())
	if err == nil || !strings.Contains(err.Error(), "prometheus at "+url+": query failed:") {
		t.Fatalf("Query against a closed port = %v", err)
	}
	if got := strings.Count(logs.String(), "retrying PromQL API call"); got != 2 {
		t.Errorf("logged %d retries, want 2:\n%s", got, logs.String())
	}
}

func TestRemoteLogsWarnings(t *testing.T) {
	body, _ := json.Marshal(map[string]any{
		"status":   "success",
		"data":     map[string]any{"resultType": "scalar", "result": []any{1700000000, "3"}},
		"warnings": []string{"PromQL info: metric might not be a counter"},
	})
	srv := httptest.NewServer(&fakeProm{responses: []fakeResponse{{status: 200, body: string(body)}}})
	defer srv.Close()
	var logs bytes.Buffer
	r, err := NewRemote(RemoteOptions{URL: srv.URL, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	vec, err := r.Query(context.Background(), "scalar(x)", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(vec) != 1 || vec[0].Value != 3 || len(vec[0].Metric) != 0 {
		t.Errorf("scalar result = %v, want one unlabelled sample of 3", vec)
	}
	if !strings.Contains(logs.String(), "metric might not be a counter") {
		t.Errorf("warning not logged: %q", logs.String())
	}
}

func TestNewRemoteValidation(t *testing.T) {
	tokenFile := writeSecret(t, "token", testToken)
	tests := []struct {
		name string
		o    RemoteOptions
		want string
	}{
		{"no scheme", RemoteOptions{URL: "prometheus:9090"}, "invalid Prometheus URL"},
		{"no host", RemoteOptions{URL: "http://"}, "invalid Prometheus URL"},
		{"password in URL is redacted", RemoteOptions{URL: "ftp://u:topsecret@host"}, "u:xxxxx@host"},
		{"token and basic auth", RemoteOptions{URL: "http://h", BearerTokenFile: tokenFile, BasicAuthUser: "u"}, "at most one"},
		{"password without user", RemoteOptions{URL: "http://h", BasicAuthPasswordFile: tokenFile}, "without a user"},
		{"authorization header", RemoteOptions{URL: "http://h", Headers: map[string]string{"Authorization": "x"}}, "not allowed"},
		{"negative retries", RemoteOptions{URL: "http://h", Retries: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRemote(tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewRemote = %v, want error containing %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "topsecret") {
				t.Errorf("error %q leaks the URL password", err)
			}
		})
	}
}

func TestRetryable(t *testing.T) {
	apiErr := &v1.Error{Type: v1.ErrBadResponse, Msg: "bad json"}
	tests := []struct {
		name   string
		status int
		err    error
		want   bool
	}{
		{"network", 0, errors.New("connection refused"), true},
		{"undecodable 200", 0, apiErr, false},
		{"deadline", 0, context.DeadlineExceeded, false},
		{"429", 429, apiErr, true},
		{"500", 500, apiErr, true},
		{"504", 504, apiErr, true},
		{"400", 400, apiErr, false},
		{"404", 404, apiErr, false},
	}
	for _, tt := range tests {
		if got := retryable(context.Background(), &attempt{status: tt.status}, tt.err); got != tt.want {
			t.Errorf("%s: retryable = %v, want %v", tt.name, got, tt.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if retryable(ctx, &attempt{status: 503}, apiErr) {
		t.Error("retryable after the caller gave up")
	}
}

// A server that quotes the Authorization header back shows basic-auth
// credentials base64-encoded, never the plain password.
func TestRemoteRedactsEchoedBasicAuth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "rejected Authorization: "+r.Header.Get("Authorization"), http.StatusBadGateway)
	}))
	defer srv.Close()
	r, err := NewRemote(RemoteOptions{URL: srv.URL, BasicAuthUser: "analyst", BasicAuthPasswordFile: writeSecret(t, "pw", "hunter2-secret")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Query(context.Background(), "up", time.Now())
	if err == nil || !strings.Contains(err.Error(), "rejected Authorization: Basic <redacted>") {
		t.Errorf("error = %v, want the echoed credentials replaced by <redacted>", err)
	}
}

// Credentials in the URL, in a file and inline (from the environment) are
// all removed from an error quoting the Authorization header or the URL,
// plain and base64: with the password in the URL's user info, the error
// printed the header's base64.
func TestRemoteRedactsEveryCredential(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		http.Error(w, "rejected Authorization: "+r.Header.Get("Authorization")+" user "+u+" password "+p+" query "+r.URL.RawQuery, http.StatusBadGateway)
	}))
	defer srv.Close()
	hostURL := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		name   string
		o      RemoteOptions
		secret string
	}{
		{"user info", RemoteOptions{URL: "http://analyst:url-pw-123456@" + hostURL}, "url-pw-123456"},
		{"password file", RemoteOptions{URL: srv.URL, BasicAuthUser: "analyst", BasicAuthPasswordFile: writeSecret(t, "pw", "file-pw-123456\n")}, "file-pw-123456"},
		{"inline password", RemoteOptions{URL: srv.URL, BasicAuthUser: "analyst", BasicAuthPassword: "env-pw-123456"}, "env-pw-123456"},
		{"inline token", RemoteOptions{URL: srv.URL, BearerToken: "env-token-123456"}, "env-token-123456"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Retries = 0
			r, err := NewRemote(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Query(context.Background(), "up", time.Now())
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range []string{tc.secret, base64.StdEncoding.EncodeToString([]byte("analyst:" + tc.secret))} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error shows %q: %v", s, err)
				}
			}
			if !strings.Contains(err.Error(), "<redacted>") {
				t.Errorf("error = %v, want the echoed credentials replaced by <redacted>", err)
			}
		})
	}
}
