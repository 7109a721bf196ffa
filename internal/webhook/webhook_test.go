package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestSend(t *testing.T) {
	tests := []struct {
		name      string
		statuses  []int
		body      string
		down      bool
		wantCalls int32
		wantErr   []string
	}{
		{name: "success", statuses: []int{200}, wantCalls: 1},
		{name: "500 then success is retried", statuses: []int{500, 200}, wantCalls: 2},
		{name: "429 is retried", statuses: []int{429, 429, 204}, wantCalls: 3},
		{name: "400 is not retried", statuses: []int{400}, body: "invalid_payload", wantCalls: 1, wantErr: []string{"400 Bad Request", "invalid_payload", "1 attempt"}},
		{name: "persistent 503 gives up", statuses: []int{503}, body: "down", wantCalls: 4, wantErr: []string{"503 Service Unavailable after 4 attempt(s): down"}},
		{name: "echoed hook path is redacted", statuses: []int{404}, body: "no such hook /services/T0/B0/" + webhookSecret, wantCalls: 1,
			wantErr: []string{"404 Not Found", "no such hook <redacted>"}},
		{name: "unreachable", down: true, wantErr: []string{"failed after 4 attempt(s)", "connect"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			var got string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := int(calls.Add(1)) - 1
				var payload map[string]string
				if r.Header.Get("Content-Type") != "application/json" || json.NewDecoder(r.Body).Decode(&payload) != nil {
					http.Error(w, "bad payload", 400)
					return
				}
				got = payload["text"]
				w.WriteHeader(tt.statuses[min(n, len(tt.statuses)-1)])
				_, _ = w.Write([]byte(tt.body))
			}))
			// The path of an incoming webhook is its secret.
			url := srv.URL + "/services/T0/B0/" + webhookSecret
			if tt.down {
				srv.Close()
			} else {
				defer srv.Close()
			}
			err := Hook{URL: url, Retries: 3, Backoff: time.Millisecond}.Send(context.Background(), []byte(`{"text":"# report"}`))
			if calls.Load() != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls.Load(), tt.wantCalls)
			}
			if tt.wantErr == nil {
				if err != nil || got != "# report" {
					t.Fatalf("err %v, text %q", err, got)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), webhookSecret) {
				t.Errorf("error %q shows the webhook URL's secret path", err)
			}
		})
	}
}

const webhookSecret = "xoxb-w3bh00k-s3cr3t"

func TestMalformedURLIsRedacted(t *testing.T) {
	err := Hook{URL: "https://hooks.example/services/" + webhookSecret + "/%zz"}.Send(context.Background(), []byte(`{"text":"x"}`))
	if err == nil || strings.Contains(err.Error(), webhookSecret) {
		t.Errorf("Send with a malformed URL = %v, want an error without the URL's path", err)
	}
}
