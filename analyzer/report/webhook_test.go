package report

import (
	"encoding/json"
	"strings"
	"testing"
)

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
