package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxWebhookBytes bounds the JSON of one webhook post. Microsoft Teams
// refuses an incoming-webhook message over 28 KB and Slack cuts text after
// 40,000 characters; a report cut by the receiver loses its end silently,
// one cut here says so.
const MaxWebhookBytes = 24 << 10

// maxWebhookTeams bounds the teams table of a message: the findings come
// after it, and a cluster of hundreds of namespaces would push them out.
const maxWebhookTeams = 15

// webhookCutNote ends a message that had to be cut.
const webhookCutNote = "\n\n… cut to fit the webhook's size limit: `gpulens report -o markdown` prints the whole report."

// WebhookText is the Markdown a webhook message carries: the report's,
// with the teams table cut to the maxWebhookTeams that held the most
// GPU-hours (r.Teams is in that order).
func WebhookText(r *Report) (string, error) {
	secs := r.sections()
	for i := range secs {
		if s := &secs[i]; s.ID == "teams" && len(s.Rows) > maxWebhookTeams {
			s.Intro += fmt.Sprintf(" The %d teams that held the most GPU-hours are listed; the full report has all %d.", maxWebhookTeams, len(s.Rows))
			s.Rows = s.Rows[:maxWebhookTeams]
		}
	}
	var b strings.Builder
	err := writeMarkdownSections(&b, r, secs)
	return b.String(), err
}

// WebhookPayload is the {"text": ...} body posted for text, at most
// MaxWebhookBytes: a text that does not fit is cut at the last line that
// does (within a line if the first one is too long) and ends with
// webhookCutNote. Invalid UTF-8 becomes U+FFFD first, as the JSON encoder
// would do byte by byte, so that the cut never splits a character.
func WebhookPayload(text string) []byte {
	// No character encodes in less than a byte, so no more than the first
	// MaxWebhookBytes can be kept: the work is bounded whatever the text.
	if len(text) > MaxWebhookBytes {
		text = text[:MaxWebhookBytes+1]
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if p := encodeText(text); len(p) <= MaxWebhookBytes {
		return p
	}
	// The encoded size grows with the prefix, so the longest prefix that
	// fits with the note is found by bisection over byte offsets, each
	// moved back to the start of its character.
	prefix := func(i int) string {
		for i > 0 && i < len(text) && !utf8.RuneStart(text[i]) {
			i--
		}
		return text[:i]
	}
	tooLong := sort.Search(len(text)+1, func(i int) bool {
		return len(encodeText(prefix(i)+webhookCutNote)) > MaxWebhookBytes
	})
	kept := prefix(tooLong - 1)
	if nl := strings.LastIndexByte(kept, '\n'); nl > 0 {
		kept = kept[:nl]
	}
	return encodeText(kept + webhookCutNote)
}

// encodeText is the payload for text. HTML escaping is off: it would
// triple the size of every <, > and & for receivers that do not need it.
func encodeText(text string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	// A struct with one string field cannot fail to encode.
	_ = enc.Encode(struct {
		Text string `json:"text"`
	}{text})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
