package source

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/gpulens/gpulens/internal/redact"
)

// maxDetail bounds how much of an error body ends up in an error message: a
// proxy's HTML error page is not worth a screenful of log.
const maxDetail = 512

// attempt records the HTTP response of one API call. client_golang's API
// hides the response, yet the status is what decides whether to retry and
// what an operator needs to see, so recordingClient smuggles it out through
// the request context.
type attempt struct {
	status     int
	statusText string
	retryAfter time.Duration
}

type attemptKey struct{}

type recordingClient struct{ api.Client }

func (c recordingClient) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	resp, body, err := c.Client.Do(ctx, req)
	// With an error the body did not arrive whole (the server died or the
	// connection was cut mid-answer): that is the network's failure, not
	// the server's answer, so it is retried like one.
	if a, ok := ctx.Value(attemptKey{}).(*attempt); ok && resp != nil && err == nil {
		a.status = resp.StatusCode
		a.statusText = resp.Status
		a.retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"))
	}
	return resp, body, err
}

func parseRetryAfter(v string) time.Duration {
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	return 0
}

// do runs call with a per-attempt timeout, retrying what a later attempt can
// fix: network errors, 429 and 5xx. logArgs describe the call in log lines.
func (r *Remote) do(ctx context.Context, op string, call func(context.Context) (v1.Warnings, error), logArgs ...any) error {
	for try := 0; ; try++ {
		a := &attempt{}
		actx, cancel := context.WithTimeout(context.WithValue(ctx, attemptKey{}, a), r.timeout)
		warnings, err := call(actx)
		cancel()
		if len(warnings) > 0 {
			r.logger.Warn("PromQL API returned warnings", append([]any{"source", r.describe, "warnings", []string(warnings)}, logArgs...)...)
		}
		if err == nil {
			// A front's warning that the answer may be partial is not
			// retried: its store is down for longer than a backoff.
			return r.partial(op, warnings)
		}
		if big, ok := tooLarge(err); ok {
			big.Query = queryOf(logArgs)
		}
		err = r.wrap(op, a, err)
		if try >= r.retries || !retryable(ctx, a, err) {
			return err
		}
		wait := r.wait(try, a.retryAfter)
		r.logger.Warn("retrying PromQL API call", append([]any{"source", r.describe, "err", err, "attempt", try + 1, "wait", wait}, logArgs...)...)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up retrying: %w)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// queryOf is the PromQL among do's logArgs, the value after "query".
func queryOf(logArgs []any) string {
	for i := 0; i+1 < len(logArgs); i += 2 {
		if k, ok := logArgs[i].(string); ok && k == "query" {
			q, _ := logArgs[i+1].(string)
			return q
		}
	}
	return ""
}

// retryable says whether another attempt could succeed. A client-side
// timeout is not retried: the same query would time out again, only later.
func retryable(ctx context.Context, a *attempt, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	// The same question gets the same oversized answer.
	if _, ok := tooLarge(err); ok {
		return false
	}
	// A certificate that failed verification fails the same way next time.
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return false
	}
	if a.status != 0 {
		return a.status == http.StatusTooManyRequests || a.status >= 500
	}
	// No response at all: a refused connection, a reset, DNS. An error the
	// API decoded from a 2xx body is the server's answer, not a glitch.
	var apiErr *v1.Error
	return !errors.As(err, &apiErr)
}

// wait is exponential backoff with jitter, so many analyzers behind one
// overloaded Prometheus do not retry in lockstep; a server's Retry-After wins
// when longer.
func (r *Remote) wait(try int, retryAfter time.Duration) time.Duration {
	d := r.backoff << try
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	d = d/2 + rand.N(d/2+1)
	if retryAfter > d {
		d = min(retryAfter, maxBackoff)
	}
	return d
}

// wrap names the server, the operation and the HTTP status, and removes any
// secret the server may have echoed back.
func (r *Remote) wrap(op string, a *attempt, err error) error {
	msg := err.Error()
	var apiErr *v1.Error
	if big, ok := tooLarge(err); ok {
		// Without net/http's "Post URL:" before it.
		msg = big.Error()
	} else if errors.As(err, &apiErr) {
		msg = apiErr.Msg
		// Generic HTTP errors carry the body as Detail and a useless
		// "server error: 503" as Msg; the body says what went wrong.
		if d := strings.TrimSpace(apiErr.Detail); d != "" {
			if len(d) > maxDetail {
				d = d[:maxDetail] + "…"
			}
			msg = d
		}
	}
	msg = r.redact.apply(msg)
	if a.status != 0 {
		return &RemoteError{Source: r.describe, Op: op, Status: a.status, StatusText: a.statusText, Msg: msg, err: err}
	}
	return &RemoteError{Source: r.describe, Op: op, Msg: msg, err: err}
}

// RemoteError is a failed API call. Status is zero when no HTTP response
// arrived (a network error or timeout).
type RemoteError struct {
	Source     string
	Op         string
	Status     int
	StatusText string
	Msg        string
	err        error
}

func (e *RemoteError) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("%s: %s failed: %s", e.Source, e.Op, e.Msg)
	}
	return fmt.Sprintf("%s: %s failed: %s: %s", e.Source, e.Op, e.StatusText, e.Msg)
}

// Unwrap keeps errors.Is(err, context.DeadlineExceeded) and *v1.Error
// inspection working for callers.
func (e *RemoteError) Unwrap() error { return e.err }

// redactor removes secrets from text that came from the server, by the
// one rule of internal/redact: the URL's user info and query, the inline
// credentials, and the secret files' contents, which are only read when
// an error is being formatted, never kept. A server that echoes the
// Authorization header quotes a basic-auth password base64-encoded with
// the user, so that form is removed too.
type redactor struct {
	url          string
	files        []string
	user         string
	password     string
	passwordFile string
	token        string
}

func (r *redactor) apply(s string) string {
	secrets := redact.Of([]string{r.url}, r.token)
	secrets.AddBasicAuth(r.user, r.password)
	for _, f := range r.files {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if f == r.passwordFile {
			secrets.AddBasicAuth(r.user, string(b))
		}
		secrets.Add(string(b))
	}
	return secrets.Apply(s)
}
