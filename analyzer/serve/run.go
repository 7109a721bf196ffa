package serve

import (
	"context"
	"errors"
	"fmt"
	"github.com/gpulens/gpulens/internal/healthz"
	"github.com/gpulens/gpulens/internal/redact"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/prometheus/common/model"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/gpulens/gpulens/analyzer/metricname"
	"github.com/gpulens/gpulens/analyzer/notify"
	"github.com/gpulens/gpulens/analyzer/session"
)

// Config is what `gpulens serve` runs with: its flags, parsed, and how to
// open the source they name. The fields carry their flag's name in the
// errors Check and Run return.
type Config struct {
	// Open opens a session over the window ending now; its errors are
	// returned as they are (the CLI maps them to exit codes already).
	Open func(ctx context.Context) (*session.Session, error)
	// Exit maps an analysis's error as Open maps its own; nil keeps it.
	Exit func(error) error
	// TimelinePoints is the report's timeline resolution, as `gpulens
	// report` draws it, so that /api/v1/report is its JSON.
	TimelinePoints int
	// Since is the window's length as given, for the start-up log line.
	Since string

	Interval            time.Duration // --interval
	Alertmanagers       []string      // --alertmanager.url
	Resend              time.Duration // --alertmanager.resend-interval
	AlertmanagerTimeout time.Duration // --alertmanager.timeout
	PushURL             string        // --push.url
	PushInterval        time.Duration // --push.interval
	PushLabels          []string      // --push.extra-label
	Listen              []string      // --web.listen-address
	WebConfig           string        // --web.config.file
	// HealthAddress also serves /healthz and /readyz, and nothing else,
	// without the web config's TLS and basic auth: for Kubernetes probes,
	// which send no credentials (--web.health-address).
	HealthAddress string
	// StateFile keeps the alerts being sent across restarts (--state.file).
	StateFile string
	// PushToken is the bearer token of PushURL; Run reads it from
	// PushTokenFile (--push.bearer-token-file) or $GPULENS_PUSH_TOKEN when
	// either is set. Never logged.
	PushToken     string
	PushTokenFile string
	// AlertmanagerUser and AlertmanagerPasswordFile are the Alertmanagers'
	// basic auth (--alertmanager.basic-auth-user,
	// --alertmanager.basic-auth-password-file, else
	// $GPULENS_ALERTMANAGER_PASSWORD), set by Run into each URL.
	AlertmanagerUser         string
	AlertmanagerPasswordFile string
	// Getenv reads the secrets' environment variables; nil is os.Getenv.
	Getenv          func(string) string
	ExternalURL     string        // --web.external-url
	ShutdownTimeout time.Duration // --web.shutdown-timeout
	Logger          *slog.Logger
}

// ConfigError is a mistake in the Config's flags: the CLI's usage error.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

func configErr(format string, args ...any) error {
	return &ConfigError{fmt.Errorf(format, args...)}
}

// Run serves until ctx ends, SIGINT or SIGTERM: the analysis every
// Interval, the HTTP endpoints, the alerts and the push. Mistakes in flags
// and files, and a source that cannot be opened, stop it at once; later
// failures only make it stale.
func Run(ctx context.Context, c Config) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := c.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The secrets first: a missing file is named before any other mistake.
	if err := c.resolveSecrets(); err != nil {
		return err
	}
	if err := c.Check(); err != nil {
		return err
	}
	// The session opened to find mistakes out serves the first cycle, so
	// that each cycle opens the source once.
	firstSession, err := c.Open(ctx)
	if err != nil {
		return err
	}
	first := make(chan *session.Session, 1)
	first <- firstSession
	defer func() {
		select {
		case s := <-first:
			s.Close()
		default:
		}
	}()

	extra, err := pushLabels(c.PushLabels)
	if err != nil {
		return err
	}

	health := metrics.NewSet()
	reportURL := strings.TrimRight(c.external(), "/") + "/api/v1/report"
	var notifier *notify.Notifier
	if len(c.Alertmanagers) > 0 {
		notifier, err = notify.New(notify.Options{URLs: c.Alertmanagers, ResendInterval: c.Resend, Timeout: c.AlertmanagerTimeout, StateFile: c.StateFile,
			Metrics: health, Logger: logger.With("component", "notify")})
		if err != nil {
			return configErr("--alertmanager.url: %w", err)
		}
	}
	exit := c.Exit
	if exit == nil {
		exit = func(err error) error { return err }
	}
	svc := New(Options{
		Analyze: func(ctx context.Context) (*Result, error) {
			var s *session.Session
			select {
			case s = <-first:
			default:
				var err error
				if s, err = c.Open(ctx); err != nil {
					return nil, err
				}
			}
			defer s.Close()
			r, a, err := s.Report(ctx, c.TimelinePoints)
			if err != nil {
				return nil, exit(err)
			}
			res := &Result{Findings: a.Findings.Findings, Report: r,
				Queries: a.Current.QueryCount + a.Previous.QueryCount}
			stale := a.Current.Stale()
			for _, n := range stale {
				res.Stale = append(res.Stale, n.NodeRef)
			}
			res.AllStale = len(stale) > 0 && len(stale) == len(a.Current.NodesSeen())
			return res, nil
		},
		Interval: c.Interval, Notifier: notifier, Health: health, ReportURL: reportURL,
		Logger: logger.With("component", "serve"),
	})

	var wg sync.WaitGroup
	bg, cancelBG := context.WithCancel(context.Background())
	defer cancelBG()
	if notifier != nil {
		wg.Go(func() { notifier.Run(bg) })
	}
	if c.PushURL != "" {
		var pushHeaders []string
		if c.PushToken != "" {
			pushHeaders = []string{"Authorization: Bearer " + c.PushToken}
		}
		pushSecrets := redact.Of([]string{c.PushURL}, c.PushToken)
		if err := metrics.InitPushExtWithOptions(bg, c.PushURL, c.PushInterval, svc.WritePush, &metrics.PushOptions{
			Method: http.MethodPost, WaitGroup: &wg, ExtraLabels: extra, Headers: pushHeaders,
			LogErr: func(format string, args ...any) {
				logger.Warn("push failed", "err", pushSecrets.Apply(fmt.Sprintf(format, args...)))
			},
		}); err != nil {
			return configErr("--push.url: %w", err)
		}
	}

	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	noSystemd := false
	errc := make(chan error, 1)
	go func() {
		errc <- web.ListenAndServe(srv, &web.FlagConfig{WebListenAddresses: &c.Listen, WebSystemdSocket: &noSystemd,
			WebConfigFile: &c.WebConfig}, logger)
	}()
	if c.HealthAddress != "" {
		probes, err := healthz.Listen(c.HealthAddress, svc.Probes())
		if err != nil {
			return &ConfigError{err}
		}
		go func() {
			if err := probes.Serve(logger); err != nil {
				errc <- err
			}
		}()
		defer probes.Shutdown(context.Background())
	}
	loopDone := make(chan struct{})
	go func() { svc.Run(ctx); close(loopDone) }()
	logger.Info("serving", "listen", c.Listen, "interval", c.Interval, "since", c.Since,
		"alertmanagers", len(c.Alertmanagers), "push", c.PushURL != "")

	var serveErr error
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			serveErr = fmt.Errorf("HTTP server: %w", err)
		}
		stop()
	case <-ctx.Done():
		logger.Info("shutting down")
	}
	<-loopDone
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	_ = srv.Shutdown(sctx)
	// The notifier's last flush and the push worker stop with bg.
	cancelBG()
	wg.Wait()
	return serveErr
}

// Check finds the mistakes in the flags that need no source, as
// *ConfigError.
func (c Config) Check() error {
	switch {
	case c.Interval <= 0:
		return configErr("--interval: %s must be positive", c.Interval)
	case c.Resend <= 0:
		return configErr("--alertmanager.resend-interval: %s must be positive", c.Resend)
	case c.PushURL != "" && c.PushInterval <= 0:
		return configErr("--push.interval: %s must be positive", c.PushInterval)
	case len(c.Listen) == 0:
		return &ConfigError{errors.New("--web.listen-address: give at least one")}
	}
	if c.PushURL != "" {
		// The library's own message would print the URL, credentials and all.
		if u, err := url.Parse(c.PushURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return &ConfigError{errors.New("--push.url: not an http(s) URL with a host")}
		}
	}
	if c.ExternalURL != "" {
		if u, err := url.Parse(c.ExternalURL); err != nil || u.Host == "" {
			return configErr("--web.external-url: %q is not an absolute URL", c.ExternalURL)
		}
	}
	return nil
}

// external is the URL alerts link to.
func (c Config) external() string {
	if c.ExternalURL != "" {
		return c.ExternalURL
	}
	host, _ := os.Hostname()
	_, port, err := net.SplitHostPort(c.Listen[0])
	if err != nil || port == "" {
		return "http://" + host
	}
	return "http://" + net.JoinHostPort(host, port)
}

// pushLabels turns K=V flags into the library's `k="v",...` form.
func pushLabels(kvs []string) (string, error) {
	parts := make([]string, 0, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !model.LabelName(k).IsValidLegacy() {
			return "", configErr("--push.extra-label: %q is not K=V with a valid label name", kv)
		}
		if v == "" {
			continue // an empty label is no label
		}
		// Name escapes the value; the library wants the part in braces.
		parts = append(parts, strings.TrimSuffix(strings.TrimPrefix(metricname.Of("x", k, v), "x{"), "}"))
	}
	return strings.Join(parts, ","), nil
}
