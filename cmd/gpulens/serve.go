package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/serve"
	"github.com/gpulens/gpulens/analyzer/session"
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
	f.DurationVar(&o.shutdownPeriod, "web.shutdown-timeout", 5*time.Second, "How long in-flight requests and queued alerts get on SIGTERM")
	return c
}

func runServe(ctx context.Context, o *serveOptions, stderr io.Writer) error {
	logger, err := newLogger(o.logLevel, stderr)
	if err != nil {
		return err
	}
	open := func(ctx context.Context) (*session.Session, error) {
		cfg, err := o.src.config(o.now(), logger, nil)
		if err != nil {
			return nil, err
		}
		return o.src.openConfig(ctx, cfg)
	}
	err = serve.Run(ctx, serve.Config{Open: open, Exit: o.src.exit, TimelinePoints: timelinePoints, Since: o.src.since,
		Interval: o.interval, Alertmanagers: o.alertmanagers, Resend: o.resend, AlertmanagerTimeout: o.amTimeout,
		PushURL: o.pushURL, PushInterval: o.pushInterval, PushLabels: o.pushLabels,
		Listen: o.listen, WebConfig: o.webConfig, ExternalURL: o.externalURL, ShutdownTimeout: o.shutdownPeriod, Logger: logger})
	var ce *serve.ConfigError
	if errors.As(err, &ce) {
		return usageError{ce.Err}
	}
	return err
}

func newLogger(level string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError{fmt.Errorf("--log.level: %q is not debug, info, warn or error", level)}
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
