package notify

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

func TestEndpointURL(t *testing.T) {
	for _, tt := range []struct {
		raw, api, name string
		auth           bool
		err            bool
	}{
		{raw: "http://am:9093", api: "http://am:9093/api/v2/alerts", name: "http://am:9093"},
		{raw: "https://am.example/prefix/", api: "https://am.example/prefix/api/v2/alerts", name: "https://am.example/prefix"},
		{raw: "http://u:s3cret@am:9093", api: "http://am:9093/api/v2/alerts", name: "http://am:9093", auth: true},
		{raw: "am:9093", err: true},
		{raw: "ftp://am", err: true},
	} {
		e, err := newEndpoint(tt.raw, http.DefaultClient)
		if tt.err {
			if err == nil {
				t.Errorf("%q: no error", tt.raw)
			}
			continue
		}
		if err != nil || e.api != tt.api || e.name != tt.name || e.hasAuth != tt.auth {
			t.Errorf("%q: %+v %v", tt.raw, e, err)
		}
	}
	if _, err := newEndpoint("http://u:s3cret@[::1", http.DefaultClient); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("an unparsable URL's error shows the password: %v", err)
	}
}

// TestRefusalQuotingCredentials is a gateway that refuses the batch and
// quotes the Authorization header, encoded and decoded: the error that is
// logged must hold neither.
func TestRefusalQuotingCredentials(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, _ := r.BasicAuth()
		http.Error(w, "denied: Authorization: "+r.Header.Get("Authorization")+" ("+u+":"+p+")", http.StatusForbidden)
	}))
	defer srv.Close()
	e, err := newEndpoint(strings.Replace(srv.URL, "http://", "http://gpulens:pa55-w0rd-s3cret@", 1), srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	err = e.post(t.Context(), []Alert{{Labels: map[string]string{"alertname": "GPULensX"}}})
	if err == nil || !isPermanent(err) || !strings.Contains(err.Error(), "403 Forbidden: denied: Authorization: Basic <redacted> (gpulens:<redacted>)") {
		t.Fatalf("post = %v, want a permanent 403 with the credentials redacted", err)
	}
	// base64 of gpulens:pa55-w0rd-s3cret
	for _, secret := range []string{"pa55-w0rd-s3cret", "Z3B1bGVuczpwYTU1LXcwcmQtczNjcmV0"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error %q shows %s", err, secret)
		}
	}
}

// TestDeliveryRetriesAndCounts drives one Notifier against a server that
// fails, then accepts, then refuses for good, and checks what it counts.
func TestDeliveryRetriesAndCounts(t *testing.T) {
	var calls, fail atomic.Int32
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if u, p, ok := r.BasicAuth(); !ok || u != "gpulens" || p != "pw" {
			http.Error(w, "no auth", http.StatusUnauthorized)
			return
		}
		if fail.Load() > 0 {
			fail.Add(-1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		b, _ := io.ReadAll(r.Body)
		got.Store(b)
	}))
	defer srv.Close()
	set := metrics.NewSet()
	n, err := New(Options{URLs: []string{strings.Replace(srv.URL, "http://", "http://gpulens:pw@", 1)}, ResendInterval: time.Hour,
		Backoff: time.Millisecond, Retries: 2, Metrics: set})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel(t)
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()

	fail.Store(2) // two 503s, then accepted on the last retry
	n.Update([]Alert{{Labels: map[string]string{"alertname": "A"}}})
	waitFor(t, func() bool { return counter(set, "sent") == 1 })
	if calls.Load() != 3 {
		t.Errorf("%d calls, want 3 (two retries)", calls.Load())
	}
	var posted []Alert
	if err := json.Unmarshal(got.Load().([]byte), &posted); err != nil || len(posted) != 1 || posted[0].EndsAt.Sub(posted[0].StartsAt) != 4*time.Hour {
		t.Errorf("posted %s (%v): want one alert valid for 4 resend intervals", got.Load(), err)
	}

	fail.Store(10) // more failures than retries
	n.Update([]Alert{{Labels: map[string]string{"alertname": "A"}}})
	waitFor(t, func() bool { return counter(set, "failed") == 1 })
	cancel()
	<-done
	if c := counter(set, "sent"); c != 1 {
		t.Errorf("sent = %d after a failed batch", c)
	}
}

func counter(set *metrics.Set, which string) uint64 {
	var b strings.Builder
	set.WritePrometheus(&b)
	for line := range strings.Lines(b.String()) {
		if strings.HasPrefix(line, "gpulens_serve_notifications_"+which+"_total{") {
			f := strings.Fields(line)
			var v uint64
			_ = json.Unmarshal([]byte(f[len(f)-1]), &v)
			return v
		}
	}
	return 0
}

// TestFullQueueDropsOldestAndCounts fills each Alertmanager's queue past
// its bound while nothing drains it (an Alertmanager that hangs).
func TestFullQueueDropsOldestAndCounts(t *testing.T) {
	set := metrics.NewSet()
	n, err := New(Options{URLs: []string{"http://am-0:9093", "http://am-1:9093"}, QueueCapacity: 2, Metrics: set})
	if err != nil {
		t.Fatal(err)
	}
	var alerts []Alert
	for _, name := range []string{"A", "B", "C", "D", "E"} {
		alerts = append(alerts, Alert{Labels: map[string]string{"alertname": name}})
	}
	n.Update(alerts)
	for _, s := range n.senders {
		if got := s.dropped.Get(); got != 3 {
			t.Errorf("%s dropped %d, want 3", s.ep.name, got)
		}
		if q := s.q.pop(10); len(q) != 2 || q[0].Labels["alertname"] != "D" || q[1].Labels["alertname"] != "E" {
			t.Errorf("%s kept %v, want the newest two", s.ep.name, q)
		}
	}
}
