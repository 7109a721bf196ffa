// Package webhook posts a message to a Slack-compatible incoming webhook,
// retrying what a later attempt can fix and keeping the hook's secret path
// out of every error. It is apart from analyzer/report so that the report,
// which only writes the message (report.WebhookPayload), links no HTTP
// client.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Hook posts a payload to a Slack-compatible incoming webhook
// ({"text": ...}, as report.WebhookPayload writes it), which Slack,
// Mattermost, Rocket.Chat and Microsoft Teams' Slack-style connectors
// accept.
type Hook struct {
	URL    string
	Client *http.Client // nil means a client with a 30s timeout
	// Retries are extra attempts after a network error, a 429 or a 5xx;
	// Backoff is the first wait, doubled each time (Retry-After wins when
	// the receiver sends one). Zero Backoff means 1s.
	Retries int
	Backoff time.Duration
}

// Error is a post the receiver refused, or that never got an answer
// (Status 0).
type Error struct {
	Status   int
	Body     string
	Attempts int
	Err      error
}

func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("sending the report to the webhook failed after %d attempt(s): %v", e.Attempts, e.Err)
	}
	s := fmt.Sprintf("the webhook answered %d %s after %d attempt(s)", e.Status, http.StatusText(e.Status), e.Attempts)
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// maxBodyExcerpt bounds how much of a refusal ends up in the error.
const maxBodyExcerpt = 300

// Send posts payload, retrying what a later attempt can fix. A 4xx other
// than 429 is not retried: the payload or URL is wrong and will stay
// wrong.
func (w Hook) Send(ctx context.Context, payload []byte) error {
	client := w.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	backoff := w.Backoff
	if backoff <= 0 {
		backoff = time.Second
	}
	for attempt := 1; ; attempt++ {
		werr, retryAfter := w.post(ctx, client, payload)
		if werr == nil {
			return nil
		}
		werr.Attempts = attempt
		retryable := werr.Status == 0 || werr.Status == http.StatusTooManyRequests || werr.Status >= 500
		if !retryable || attempt > w.Retries || ctx.Err() != nil {
			return werr
		}
		wait := backoff << (attempt - 1)
		if retryAfter > 0 {
			wait = retryAfter
		}
		t := time.NewTimer(min(wait, time.Minute))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(werr, ctx.Err())
		case <-t.C:
		}
	}
}

func (w Hook) post(ctx context.Context, client *http.Client, payload []byte) (*Error, time.Duration) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(payload))
	if err != nil {
		return &Error{Err: redactURL(err)}, 0
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return &Error{Err: redactURL(err)}, 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxBodyExcerpt+1))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil, 0
	}
	excerpt := redactEcho(strings.TrimSpace(string(body)), w.URL)
	if len(excerpt) > maxBodyExcerpt {
		excerpt = excerpt[:maxBodyExcerpt] + "…"
	}
	var retryAfter time.Duration
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		retryAfter = time.Duration(s) * time.Second
	}
	return &Error{Status: resp.StatusCode, Body: excerpt}, retryAfter
}

// redactURL keeps only the scheme and host of the URL that net/http and
// net/url errors quote: an incoming webhook's path is its credential
// (anyone holding a Slack hook URL can post to the channel).
func redactURL(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	shown := "<webhook URL>"
	if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
		shown = u.Scheme + "://" + u.Host + "/<redacted>"
	}
	return &url.Error{Op: ue.Op, URL: shown, Err: ue.Err}
}

// redactEcho removes the webhook URL's path and query from a receiver's
// answer: receivers that reject a hook often quote it back.
func redactEcho(body, hook string) string {
	u, err := url.Parse(hook)
	if err != nil {
		return body
	}
	for _, secret := range []string{u.RawQuery, u.EscapedPath(), u.Path} {
		if len(secret) > 1 {
			body = strings.ReplaceAll(body, secret, "<redacted>")
		}
	}
	return body
}
