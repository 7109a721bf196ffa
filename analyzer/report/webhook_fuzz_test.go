package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gpulens/gpulens/analyzer/rollup"
	"github.com/gpulens/gpulens/internal/webhook"
	"github.com/gpulens/gpulens/vocab"
)

// roundTripFunc is an http.RoundTripper that never leaves the process, so
// that the fuzzer runs Send thousands of times a second.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// plain matches the strings that Markdown and JSON carry unchanged, whose
// table rows the test can therefore spell out itself.
var plain = regexp.MustCompile(`^[A-Za-z0-9 .,:/#-]*$`)

// FuzzWebhookPayload builds a report of arbitrary teams and findings,
// makes its webhook message and sends it to a hook URL whose path and query
// hold a token, through a receiver that quotes the URL back when it
// refuses. Whatever the input: the body is one JSON object holding one
// string, text, of at most MaxWebhookBytes; neither the body nor Send's
// error holds the token; a message that fits is the report's Markdown and
// lists every finding and team row the scenario put in (when plain and
// short, they must fit), and one that does not says it was cut.
func FuzzWebhookPayload(f *testing.F) {
	f.Add("warning", "idle-allocation", "ml", "Pod/research/alice", "held a whole H100 for 168 h", uint8(3), uint16(4), "team", "T0/B0/XXXX", 200)
	f.Add("critical", "timeslice-oom-risk", "", "", "", uint8(25), uint16(40), "ns", "abc", 500)
	f.Add("info", "k|*_`<>&", "t\n\"x\"", "\x00\x1f\u2028", "\xff\xfe sum", uint8(1), uint16(1), "é", "a%2Fb?c=d", 404)
	f.Add("warning", strings.Repeat("k", 3000), "t", "s", strings.Repeat("long summary ", 400), uint8(30), uint16(200), strings.Repeat("n", 200), "", 429)
	f.Fuzz(func(t *testing.T, sev, kind, team, subject, summary string, nFindings uint8, nTeams uint16, teamName, token string, status int) {
		nf, nt := int(nFindings)%40, int(nTeams)%48
		// 47 teams print the name twice each: a longer one only makes
		// the fuzzer slower at what a 1 KiB name already shows.
		teamName = teamName[:min(len(teamName), 1<<10)]
		secret := "s3cr3t-" + token
		r := &Report{Window: Window{Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, Hours: 168}, Previous: Window{Start: weekEnd.Add(-14 * 24 * time.Hour), End: weekEnd.Add(-7 * 24 * time.Hour), Hours: 168},
			Schema: "native", Findings: Findings{Items: []Finding{}}}
		for i := range nt {
			// Most GPU-hours first, the order Build gives.
			r.Teams = append(r.Teams, rollup.Team{Team: fmt.Sprintf("%s-%d", teamName, i), Namespaces: []string{teamName}, Allocations: 1,
				Hours: rollup.Hours{AllocatedGPUHours: float64(nt - i)}})
		}
		var critical, warning, info int
		for i := range nf {
			r.Findings.Items = append(r.Findings.Items, Finding{Severity: sev, Kind: vocab.Kind(kind), Team: team, Subject: subject, Summary: fmt.Sprintf("%s #%d", summary, i)})
			switch sev {
			case "critical":
				critical++
			case "warning":
				warning++
			default:
				info++
			}
		}
		r.Findings.Critical, r.Findings.Warning, r.Findings.Info = critical, warning, info

		hook := "https://hooks.example.com/services/" + url.PathEscape(secret) + "?token=" + url.QueryEscape(secret)
		var body []byte
		client := &http.Client{Transport: roundTripFunc(func(req *http.Request) (*http.Response, error) {
			body, _ = io.ReadAll(req.Body)
			code := 200
			if status%5 != 0 {
				code = []int{400, 404, 429, 503}[(status%5+5)%5-1]
			}
			echo := "no such hook: " + req.URL.String() + " (path " + req.URL.Path + ")"
			return &http.Response{StatusCode: code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(echo)), Request: req}, nil
		})}
		text, err := WebhookText(r)
		if err != nil {
			t.Fatal(err)
		}
		sendErr := webhook.Hook{URL: hook, Client: client}.Send(context.Background(), WebhookPayload(text))

		if len(body) > MaxWebhookBytes {
			t.Fatalf("payload of %d bytes, over MaxWebhookBytes (%d)", len(body), MaxWebhookBytes)
		}
		var fields map[string]any
		dec := json.NewDecoder(bytes.NewReader(body))
		if err := dec.Decode(&fields); err != nil || dec.More() {
			t.Fatalf("payload is not one JSON object (%v): %.200q", err, body)
		}
		got, ok := fields["text"].(string)
		if len(fields) != 1 || !ok {
			t.Fatalf("payload has fields %v, want text alone", fields)
		}
		if inputs := strings.Join([]string{sev, kind, team, subject, summary, teamName}, "\x00"); !strings.Contains(inputs, secret) {
			if bytes.Contains(body, []byte(secret)) || bytes.Contains(body, []byte(url.PathEscape(secret))) {
				t.Errorf("payload holds the hook's token %q", secret)
			}
		}
		if sendErr != nil && len(secret) > len("s3cr3t-") && strings.Contains(sendErr.Error(), secret) {
			t.Errorf("Send's error holds the hook's token: %v", sendErr)
		}

		cut := strings.HasSuffix(got, webhookCutNote)
		if !cut && got != strings.ToValidUTF8(text, "\uFFFD") {
			t.Fatalf("an uncut message is not the report's Markdown")
		}
		short := true
		for _, s := range []string{sev, kind, team, subject, summary, teamName} {
			short = short && plain.MatchString(s) && len(s) <= 64
		}
		if !short {
			if !cut && !utf8.ValidString(got) {
				t.Error("text is not valid UTF-8")
			}
			return
		}
		// At most 20 findings, 15 teams and the fixed sections, of strings
		// of 64 bytes: well under MaxWebhookBytes, so nothing may be cut.
		if cut {
			t.Fatalf("a message of %d findings and %d teams of short names was cut", nf, nt)
		}
		want := []string{fmt.Sprintf("%d critical, %d warning, %d info.", critical, warning, info)}
		for i := range min(nf, 20) {
			want = append(want, fmt.Sprintf("\n| %s | %s | %s | %s | - | %s #%d |\n", sev, kind, team, subject, summary, i))
		}
		for i := range min(nt, 15) {
			want = append(want, fmt.Sprintf("\n| %s-%d | %s | %d.0 |", teamName, i, teamName, nt-i))
		}
		if nt > 15 {
			want = append(want, fmt.Sprintf("The 15 teams that held the most GPU-hours are listed; the full report has all %d.", nt))
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("message lacks %q", w)
			}
		}
		if nt > 15 && strings.Contains(got, fmt.Sprintf("\n| %s-%d | ", teamName, 15)) {
			t.Errorf("message lists team %d of %d; it should stop at 15", 16, nt)
		}
	})
}
