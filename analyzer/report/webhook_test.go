package report

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

func TestWebhookSend(t *testing.T) {
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
			err := Webhook{URL: url, Retries: 3, Backoff: time.Millisecond}.Send(context.Background(), "# report")
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

func TestWebhookMalformedURLIsRedacted(t *testing.T) {
	err := Webhook{URL: "https://hooks.example/services/" + webhookSecret + "/%zz"}.Send(context.Background(), "x")
	if err == nil || strings.Contains(err.Error(), webhookSecret) {
		t.Errorf("Send with a malformed URL = %v, want an error without the URL's path", err)
	}
}

func TestWebhookPayload(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n" // 100 bytes, 101 encoded
	tests := []struct {
		name string
		text string
		// wantText is the text the payload carries; "" means the cut form
		// is checked by wantLines instead.
		wantText  string
		wantLines int // whole lines of line kept before the note
	}{
		{name: "fits as is, HTML characters unescaped", text: "a <b> & \"c\"\n", wantText: "a <b> & \"c\"\n"},
		{name: "invalid UTF-8 becomes U+FFFD", text: "a\xffb", wantText: "a\uFFFDb"},
		// Each line encodes as 101 bytes; the note's payload is the
		// object's 11 bytes ({"text":""}) and the note.
		{name: "cut at the last line that fits with the note", text: strings.Repeat(line, 1000),
			wantLines: (MaxWebhookBytes - len(encodeText(webhookCutNote))) / 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := WebhookPayload(tt.text)
			var got map[string]string
			if err := json.Unmarshal(p, &got); err != nil {
				t.Fatal(err)
			}
			if len(p) > MaxWebhookBytes {
				t.Errorf("%d bytes, over %d", len(p), MaxWebhookBytes)
			}
			if tt.wantText != "" {
				if got["text"] != tt.wantText {
					t.Errorf("text %q, want %q", got["text"], tt.wantText)
				}
				return
			}
			want := strings.TrimSuffix(strings.Repeat(line, tt.wantLines), "\n") + webhookCutNote
			if got["text"] != want {
				t.Errorf("kept %d bytes before the note, want %d lines (%d bytes)", len(got["text"])-len(webhookCutNote), tt.wantLines, len(want)-len(webhookCutNote))
			}
		})
	}
	// One line too long for a message is cut inside, never inside a
	// character: é is two bytes.
	p := WebhookPayload(strings.Repeat("é", MaxWebhookBytes))
	var got map[string]string
	if err := json.Unmarshal(p, &got); err != nil || len(p) > MaxWebhookBytes || !strings.HasSuffix(got["text"], webhookCutNote) {
		t.Fatalf("%d bytes, err %v", len(p), err)
	}
	kept := strings.TrimSuffix(got["text"], webhookCutNote)
	if strings.Trim(kept, "é") != "" || len(p) < MaxWebhookBytes-1 {
		t.Errorf("kept %d bytes of é, payload %d bytes: want the most that fits, whole characters", len(kept), len(p))
	}
}
