package send

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/webhook"
)

// A receiver that fails for a moment (Slack answers 503 or 429 under
// load) gets the report on a retry; one that keeps refusing fails the
// send with the receiver's answer, and the command with it.
func TestWebhook(t *testing.T) {
	r := &report.Report{Currency: "USD", Window: report.Window{Start: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC),
		End: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Hours: 168}}
	for _, tt := range []struct {
		name     string
		failures int32 // 503s before a 200
		wantErr  bool
	}{
		{name: "first try", failures: 0},
		{name: "after two 503s", failures: 2},
		{name: "refused every time", failures: 100, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			var text string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if calls.Add(1) <= tt.failures {
					http.Error(w, "busy", http.StatusServiceUnavailable)
					return
				}
				body, _ := io.ReadAll(req.Body)
				var p struct{ Text string }
				if err := json.Unmarshal(body, &p); err != nil {
					t.Errorf("payload %q is not Slack's {\"text\": ...}: %v", body, err)
				}
				text = p.Text
			}))
			defer srv.Close()
			err := webhookTo(context.Background(), webhook.Hook{URL: srv.URL, Retries: Retries, Backoff: time.Millisecond}, r)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "the report was not sent") || calls.Load() != 1+Retries {
					t.Errorf("err %v after %d posts, want the report not sent after %d", err, calls.Load(), 1+Retries)
				}
				return
			}
			if err != nil {
				t.Fatalf("send: %v", err)
			}
			if want, _ := report.WebhookText(r); text == "" || text != want {
				t.Errorf("the receiver got %q, want the report's webhook text", text)
			}
		})
	}
}
