package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	redaction "github.com/gpulens/gpulens/internal/redact"
)

// endpoint is one Alertmanager's alerts API.
type endpoint struct {
	// api is .../api/v2/alerts, without user info.
	api string
	// name identifies it in logs and metrics: scheme, host and path, never
	// the credentials.
	name       string
	user, pass string
	hasAuth    bool
	client     *http.Client
}

// newEndpoint parses an Alertmanager URL (its root, as in
// http://alertmanager:9093, or behind a path prefix). Basic auth may be
// given as user info; it is sent as a header and never logged.
func newEndpoint(raw string, client *http.Client) (*endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("alertmanager URL %q is not an http(s) URL with a host", redact(raw))
	}
	e := &endpoint{client: client}
	if u.User != nil {
		e.user = u.User.Username()
		e.pass, _ = u.User.Password()
		e.hasAuth = true
		u.User = nil
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	e.name = u.String()
	u.Path += "/api/v2/alerts"
	e.api = u.String()
	return e, nil
}

// redact hides credentials in a URL that failed to parse as well.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		return "xxxxx" + raw[i:]
	}
	return raw
}

// redactEcho removes the credentials from an answer: a proxy or gateway
// that refuses a request may quote its Authorization header back, as the
// header's base64 or decoded.
func (e *endpoint) redactEcho(msg string) string {
	if !e.hasAuth {
		return msg
	}
	var s redaction.Secrets
	s.AddBasicAuth(e.user, e.pass)
	return s.Apply(msg)
}

// permanentError is an answer that a retry cannot change (a 4xx other
// than 429): the batch is wrong, not the moment.
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

func isPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// post sends one batch. Its context bounds the attempt.
func (e *endpoint) post(ctx context.Context, batch []Alert) error {
	body, err := json.Marshal(batch)
	if err != nil {
		return permanentError{err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.api, bytes.NewReader(body))
	if err != nil {
		return permanentError{err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "gpulens")
	if e.hasAuth {
		req.SetBasicAuth(e.user, e.pass)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// The error text holds the URL we built, which has no user info.
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err = fmt.Errorf("%s: %s: %s", e.name, resp.Status, e.redactEcho(strings.TrimSpace(string(msg))))
	if resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusTooManyRequests {
		return permanentError{err}
	}
	return err
}
