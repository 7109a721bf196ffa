package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/metricname"
	"github.com/gpulens/gpulens/analyzer/notify"
	"github.com/gpulens/gpulens/analyzer/serve"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/internal/redact"
)

type serveOptions struct {
	src            sourceFlags
	interval       time.Duration
	alertmanagers  []string
	resend         time.Duration
	amTimeout      time.Duration
	pushURL        string
	pushInterval   time.Duration
	pushLabels     []string
	listen         []string
	webConfig      string
	externalURL    string
	logLevel       string
	shutdownPeriod time.Duration
	now            func() time.Time
	secrets        serveSecrets
	stateFile      string
}

// serveDefaultSince is shorter than report's week: an alert should
// resolve within a day of the waste ending, not a week later.
const serveDefaultSince = "24h"

func newServeCmd() *cobra.Command {
	o := &serveOptions{now: time.Now}
	c := &cobra.Command{
		Use:     "serve",
		GroupID: "basic",
		Short:   "Analyze on an interval; serve findings as metrics and JSON, and send them to Alertmanager",
		Long: `Run the analysis every --interval over the last --since, and serve its outcome:

  /metrics           findings and team figures as series (gpulens_finding, gpulens_team_gpu_seconds, ...)
                     and the service's own health (docs/METRICS.md)
  /api/v1/report     the report, the same JSON as 'gpulens report --format json'
  /api/v1/findings   the findings, in the form of 'gpulens recommend --format json --all'
  /healthz, /readyz  the process; a successful analysis within three intervals

With --alertmanager.url, every finding is an alert (alertname GPULens<Kind in CamelCase>, the rule
files' prefix; labels severity, namespace, workload, node, gpu_uuid; annotations summary, description,
runbook_url and the report's link) sent to every Alertmanager given, re-sent every
--alertmanager.resend-interval, and resolved when the finding goes away. With --push.url the series
are also pushed to VictoriaMetrics' import endpoint.

An analysis that fails leaves the last good one served, marked stale (gpulens_serve_stale,
X-Gpulens-Stale, "stale" in /api/v1/findings). SIGTERM shuts down gracefully.`,
		Example: `  # In the cluster, against Prometheus, with an HA pair of Alertmanagers
  gpulens serve --prometheus-url http://prometheus:9090 \
    --alertmanager.url http://alertmanager-0:9093 --alertmanager.url http://alertmanager-1:9093

  # Over the TSDB 'gpulens demo --data-dir' kept, pushing to VictoriaMetrics
  gpulens serve --data-dir ./demo-data --since 7d --no-kubernetes \
    --push.url http://victoria-metrics:8428/api/v1/import/prometheus`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runServe(c.Context(), o, c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	since := f.Lookup("since")
	_ = since.Value.Set(serveDefaultSince)
	since.DefValue = serveDefaultSince
	f.DurationVar(&o.interval, "interval", 15*time.Minute, "How often the analysis runs")
	f.StringArrayVar(&o.alertmanagers, "alertmanager.url", nil, "Alertmanager to send alerts to; repeat for every member of an HA set (not a load balancer). Basic auth as user info")
	f.DurationVar(&o.resend, "alertmanager.resend-interval", time.Minute, "How often active alerts are sent again; they are valid for four times this")
	f.DurationVar(&o.amTimeout, "alertmanager.timeout", 10*time.Second, "Timeout of one POST to an Alertmanager")
	f.StringVar(&o.pushURL, "push.url", "", "Also push the series to this URL, e.g. VictoriaMetrics' http://vm:8428/api/v1/import/prometheus")
	f.DurationVar(&o.pushInterval, "push.interval", time.Minute, "How often the series are pushed to --push.url")
	f.StringArrayVar(&o.pushLabels, "push.extra-label", nil, "Label K=V added to every pushed series, e.g. cluster=prod (repeatable)")
	f.StringArrayVar(&o.listen, "web.listen-address", []string{":9846"}, "Address to serve on (exporter-toolkit; repeatable)")
	f.StringVar(&o.webConfig, "web.config.file", "", "exporter-toolkit web config file: TLS and basic auth")
	f.StringVar(&o.externalURL, "web.external-url", "", "URL this server is reached at, linked from alerts (default: http://<hostname><port of the first --web.listen-address>)")
	f.StringVar(&o.logLevel, "log.level", "info", "Log level: debug, info, warn or error")
	o.secrets.register(f)
	f.StringVar(&o.stateFile, "state.file", "", "File keeping the alerts being sent across restarts (written atomically after each analysis), so that a restart neither resolves nor re-fires them; on a volume that outlives the container")
	f.DurationVar(&o.shutdownPeriod, "web.shutdown-timeout", 5*time.Second, "How long in-flight requests and queued alerts get on SIGTERM")
	return c
}

func runServe(ctx context.Context, o *serveOptions, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger, err := newLogger(o.logLevel, stderr)
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	// Mistakes in flags and files, and a data directory that is not a
	// TSDB, stop the server at once; later failures only make it stale.
	// The session opened to find them out serves the first cycle, so that
	// each cycle opens the source once.
	cfg, err := o.src.config(o.now(), logger, nil)
	if err != nil {
		return err
	}
	firstSession, err := o.src.openConfig(ctx, cfg)
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

	extra, err := pushLabels(o.pushLabels)
	if err != nil {
		return err
	}

	ams, err := o.secrets.alertmanagerURLs(o.alertmanagers, os.Getenv)
	if err != nil {
		return err
	}
	pushToken, err := o.secrets.pushToken(os.Getenv)
	if err != nil {
		return err
	}
	var pushHeaders []string
	if pushToken != "" {
		pushHeaders = []string{"Authorization: Bearer " + pushToken}
	}
	pushSecrets := redact.Of([]string{o.pushURL}, pushToken)

	health := metrics.NewSet()
	reportURL := strings.TrimRight(o.external(), "/") + "/api/v1/report"
	var notifier *notify.Notifier
	if len(o.alertmanagers) > 0 {
		notifier, err = notify.New(notify.Options{URLs: ams, ResendInterval: o.resend, Timeout: o.amTimeout, StateFile: o.stateFile,
			Metrics: health, Logger: logger.With("component", "notify")})
		if err != nil {
			return usageError{fmt.Errorf("--alertmanager.url: %w", err)}
		}
	}
	svc := serve.New(serve.Options{
		Analyze: func(ctx context.Context) (*serve.Result, error) {
			var s *session.Session
			select {
			case s = <-first:
			default:
				cfg, err := o.src.config(o.now(), logger, nil)
				if err != nil {
					return nil, err
				}
				if s, err = o.src.openConfig(ctx, cfg); err != nil {
					return nil, err
				}
			}
			defer s.Close()
			// The report 'gpulens report' gives, so that /api/v1/report
			// is its JSON.
			r, a, err := s.Report(ctx, timelinePoints)
			if err != nil {
				return nil, o.src.exit(err)
			}
			return &serve.Result{Findings: a.Findings.Findings, Report: r,
				Queries: a.Current.QueryCount + a.Previous.QueryCount}, nil
		},
		Interval: o.interval, Notifier: notifier, Health: health, ReportURL: reportURL,
		Logger: logger.With("component", "serve"),
	})

	var wg sync.WaitGroup
	bg, cancelBG := context.WithCancel(context.Background())
	defer cancelBG()
	if notifier != nil {
		wg.Go(func() { notifier.Run(bg) })
	}
	if o.pushURL != "" {
		if err := metrics.InitPushExtWithOptions(bg, o.pushURL, o.pushInterval, svc.WritePush, &metrics.PushOptions{
			Method: http.MethodPost, WaitGroup: &wg, ExtraLabels: extra, Headers: pushHeaders,
			LogErr: func(format string, args ...any) {
				logger.Warn("push failed", "err", pushSecrets.Apply(fmt.Sprintf(format, args...)))
			},
		}); err != nil {
			return usageError{fmt.Errorf("--push.url: %w", err)}
		}
	}

	srv := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	noSystemd := false
	errc := make(chan error, 1)
	go func() {
		errc <- web.ListenAndServe(srv, &web.FlagConfig{WebListenAddresses: &o.listen, WebSystemdSocket: &noSystemd,
			WebConfigFile: &o.webConfig}, logger)
	}()
	loopDone := make(chan struct{})
	go func() { svc.Run(ctx); close(loopDone) }()
	logger.Info("serving", "listen", o.listen, "interval", o.interval, "since", o.src.since,
		"alertmanagers", len(o.alertmanagers), "push", o.pushURL != "")

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
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownPeriod)
	defer cancel()
	_ = srv.Shutdown(sctx)
	// The notifier's last flush and the push worker stop with bg.
	cancelBG()
	wg.Wait()
	return serveErr
}

func (o *serveOptions) check() error {
	switch {
	case o.interval <= 0:
		return usageError{fmt.Errorf("--interval: %s must be positive", o.interval)}
	case o.resend <= 0:
		return usageError{fmt.Errorf("--alertmanager.resend-interval: %s must be positive", o.resend)}
	case o.pushURL != "" && o.pushInterval <= 0:
		return usageError{fmt.Errorf("--push.interval: %s must be positive", o.pushInterval)}
	case len(o.listen) == 0:
		return usageError{errors.New("--web.listen-address: give at least one")}
	}
	if o.pushURL != "" {
		// The library's own message would print the URL, credentials and all.
		if u, err := url.Parse(o.pushURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return usageError{errors.New("--push.url: not an http(s) URL with a host")}
		}
	}
	if o.externalURL != "" {
		if u, err := url.Parse(o.externalURL); err != nil || u.Host == "" {
			return usageError{fmt.Errorf("--web.external-url: %q is not an absolute URL", o.externalURL)}
		}
	}
	return nil
}

// external is the URL alerts link to.
func (o *serveOptions) external() string {
	if o.externalURL != "" {
		return o.externalURL
	}
	host, _ := os.Hostname()
	_, port, err := net.SplitHostPort(o.listen[0])
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
			return "", usageError{fmt.Errorf("--push.extra-label: %q is not K=V with a valid label name", kv)}
		}
		if v == "" {
			continue // an empty label is no label
		}
		// Name escapes the value; the library wants the part in braces.
		parts = append(parts, strings.TrimSuffix(strings.TrimPrefix(metricname.Of("x", k, v), "x{"), "}"))
	}
	return strings.Join(parts, ","), nil
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Errorf("--log.level: %q is not debug, info, warn or error", level)}
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
