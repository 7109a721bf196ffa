package source

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

const (
	defaultRemoteTimeout = 2 * time.Minute
	defaultBackoff       = 500 * time.Millisecond
	maxBackoff           = 30 * time.Second
)

// RemoteOptions configures a Prometheus-compatible HTTP API. Secrets are only
// ever given as files so they never sit in flags, process listings or logs,
// and are re-read on every request so rotated tokens are picked up.
type RemoteOptions struct {
	// URL is the API root, e.g. http://prometheus:9090 or, for Mimir,
	// http://mimir/prometheus; /api/v1/... is appended.
	URL string

	BearerTokenFile       string
	BasicAuthUser         string
	BasicAuthPasswordFile string
	// BearerToken and BasicAuthPassword are the secrets themselves, for
	// callers that read them from the environment; the files win.
	BearerToken       string
	BasicAuthPassword string

	CAFile             string
	CertFile           string
	KeyFile            string
	InsecureSkipVerify bool

	// Headers are sent with every request, e.g. X-Scope-OrgID for Mimir and
	// Cortex tenants. Authorization cannot be set here: use the auth fields.
	Headers map[string]string

	// Timeout bounds one attempt, and is passed to the server as the query
	// timeout so it stops evaluating too. Zero means 2m.
	Timeout time.Duration
	// Retries is the number of extra attempts after a network error, a 429 or
	// a 5xx; zero disables retrying. A 4xx (a bad query) is never retried.
	Retries int
	// Backoff is the wait before the first retry, doubled for each further
	// one up to 30s. Zero means 500ms.
	Backoff time.Duration

	// MaxReplyBytes is the largest reply body read, in bytes after
	// decompression, from any endpoint; a larger one fails the call with
	// a *ReplyTooLargeError, unretried. Zero means no limit, as
	// Prometheus's body_size_limit. MaxReplyFlag names the setting that
	// raises it, for the error (the CLI's flag); empty means
	// "RemoteOptions.MaxReplyBytes".
	MaxReplyBytes int64
	MaxReplyFlag  string

	// DisableRemoteRead keeps the analysis off the remote-read endpoint:
	// every figure is then asked of the server's PromQL engine.
	DisableRemoteRead bool

	// Logger receives API warnings and retries. Nil discards them.
	Logger *slog.Logger
}

// Remote is a Source backed by a Prometheus-compatible HTTP API.
type Remote struct {
	api      v1.API
	describe string
	timeout  time.Duration
	retries  int
	backoff  time.Duration
	logger   *slog.Logger
	redact   *redactor
	client   *http.Client
	// read is the store's remote-read endpoint, probed on first use
	// (RawSamples).
	read remoteRead
}

var _ Source = (*Remote)(nil)

// NewRemote validates o and builds the HTTP client. It does not contact the
// server: the first query reports an unreachable one.
func NewRemote(o RemoteOptions) (*Remote, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("invalid Prometheus URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid Prometheus URL %q: want http(s)://host[:port][/path]", u.Redacted())
	}
	describe := "prometheus at " + u.Redacted()
	if o.Retries < 0 || o.Timeout < 0 || o.Backoff < 0 || o.MaxReplyBytes < 0 {
		return nil, fmt.Errorf("%s: retries, timeout, backoff and the reply limit must not be negative", describe)
	}

	cfg, err := httpClientConfig(o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describe, err)
	}
	hc, err := config.NewClientFromConfig(cfg, "gpulens-analyzer")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describe, err)
	}
	if o.MaxReplyBytes > 0 {
		hc.Transport = &replyLimit{next: hc.Transport, limit: o.MaxReplyBytes, flag: cmp.Or(o.MaxReplyFlag, "RemoteOptions.MaxReplyBytes")}
	}
	c, err := api.NewClient(api.Config{Address: o.URL, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describe, err)
	}

	r := &Remote{
		api:      v1.NewAPI(recordingClient{readingClient{Client: c, hc: hc, limit: o.MaxReplyBytes}}),
		describe: describe,
		timeout:  o.Timeout,
		retries:  o.Retries,
		backoff:  o.Backoff,
		logger:   o.Logger,
		redact: &redactor{url: o.URL, files: []string{o.BearerTokenFile, o.BasicAuthPasswordFile}, user: o.BasicAuthUser,
			password: o.BasicAuthPassword, passwordFile: o.BasicAuthPasswordFile, token: o.BearerToken},
		client: hc,
		read:   remoteRead{url: u.JoinPath("api", "v1", "read"), disabled: o.DisableRemoteRead},
	}
	if r.timeout == 0 {
		r.timeout = defaultRemoteTimeout
	}
	if r.backoff == 0 {
		r.backoff = defaultBackoff
	}
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// httpClientConfig maps the options onto prometheus/common's client config,
// the one Prometheus itself uses for scraping and remote write, so TLS, auth
// and header semantics (and their validation) match the rest of the ecosystem.
func httpClientConfig(o RemoteOptions) (config.HTTPClientConfig, error) {
	cfg := config.DefaultHTTPClientConfig
	cfg.BearerTokenFile = o.BearerTokenFile
	if o.BearerTokenFile == "" {
		cfg.BearerToken = config.Secret(o.BearerToken)
	}
	if o.BasicAuthUser != "" || o.BasicAuthPasswordFile != "" || o.BasicAuthPassword != "" {
		if o.BasicAuthUser == "" {
			return cfg, errors.New("basic auth password given without a user")
		}
		cfg.BasicAuth = &config.BasicAuth{Username: o.BasicAuthUser, PasswordFile: o.BasicAuthPasswordFile}
		if o.BasicAuthPasswordFile == "" {
			cfg.BasicAuth.Password = config.Secret(o.BasicAuthPassword)
		}
	}
	cfg.TLSConfig = config.TLSConfig{
		CAFile:             o.CAFile,
		CertFile:           o.CertFile,
		KeyFile:            o.KeyFile,
		InsecureSkipVerify: o.InsecureSkipVerify,
	}
	if len(o.Headers) > 0 {
		h := &config.Headers{Headers: make(map[string]config.Header, len(o.Headers))}
		for k, v := range o.Headers {
			h.Headers[k] = config.Header{Values: []string{v}}
		}
		cfg.HTTPHeaders = h
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// Describe implements Source.
func (r *Remote) Describe() string { return r.describe }

// Close releases idle connections.
func (r *Remote) Close() error {
	r.client.CloseIdleConnections()
	return nil
}

// Query implements Source.
func (r *Remote) Query(ctx context.Context, q string, ts time.Time) (model.Vector, error) {
	var vec model.Vector
	err := r.do(ctx, "query", func(ctx context.Context) (v1.Warnings, error) {
		v, warnings, _, err := r.api.Query(ctx, q, ts, v1.WithTimeout(r.timeout))
		if err != nil {
			return warnings, err
		}
		vec, err = toVector(v)
		return warnings, err
	}, "query", q)
	return vec, err
}

// MetricNames implements Source.
func (r *Remote) MetricNames(ctx context.Context, start, end time.Time) ([]string, error) {
	var names []string
	err := r.do(ctx, "listing metric names", func(ctx context.Context) (v1.Warnings, error) {
		vals, warnings, _, err := r.api.LabelValues(ctx, model.MetricNameLabel, nil, start, end)
		names = make([]string, len(vals))
		for i, v := range vals {
			names[i] = string(v)
		}
		return warnings, err
	})
	return names, err
}
