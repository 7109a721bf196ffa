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
	src      sourceFlags
	cfg      serve.Config // the flags serve.Run takes as they are
	logLevel string
	now      func() time.Time
}

// serveDefaultSince is shorter than report's week: an alert should
// resolve within a day of the waste ending, not a week later.
const serveDefaultSince = "24h"

func newServeCmd() *cobra.Command {
	o := &serveOptions{now: time.Now}
	o.src.JudgeNow = true // an alert is of the fleet now, not of where a stopped store ends
	c := &cobra.Command{
		Use:     "serve",
		GroupID: "basic",
		Short:   "Analyze on an interval; serve findings as metrics and JSON, and send them to Alertmanager",
		Long:    help("serve"),
		Example: examples("serve"),
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runServe(c.Context(), o, c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	since := f.Lookup("since")
	_ = since.Value.Set(serveDefaultSince)
	since.DefValue = serveDefaultSince
	f.DurationVar(&o.cfg.Interval, "interval", 15*time.Minute, "How often the analysis runs")
	f.StringArrayVar(&o.cfg.Alertmanagers, "alertmanager.url", nil, "Alertmanager to send alerts to; repeat for every member of an HA set (not a load balancer). Basic auth as user info")
	f.DurationVar(&o.cfg.Resend, "alertmanager.resend-interval", time.Minute, "How often active alerts are sent again; they are valid for four times this")
	f.DurationVar(&o.cfg.AlertmanagerTimeout, "alertmanager.timeout", 10*time.Second, "Timeout of one POST to an Alertmanager")
	f.StringVar(&o.cfg.PushURL, "push.url", "", "Also push the series to this URL, e.g. VictoriaMetrics' http://vm:8428/api/v1/import/prometheus")
	f.DurationVar(&o.cfg.PushInterval, "push.interval", time.Minute, "How often the series are pushed to --push.url")
	f.StringArrayVar(&o.cfg.PushLabels, "push.extra-label", nil, "Label K=V added to every pushed series, e.g. cluster=prod (repeatable)")
	f.StringArrayVar(&o.cfg.Listen, "web.listen-address", []string{":9846"}, "Address to serve on (exporter-toolkit; repeatable)")
	f.StringVar(&o.cfg.WebConfig, "web.config.file", "", "exporter-toolkit web config file: TLS and basic auth")
	f.StringVar(&o.cfg.HealthAddress, "web.health-address", "", "Also serve /healthz and /readyz, and nothing else, on this address (e.g. :9848) in plain HTTP without --web.config.file's TLS and basic auth, for Kubernetes probes")
	f.StringVar(&o.cfg.ExternalURL, "web.external-url", "", "URL this server is reached at, linked from alerts (default: http://<hostname><port of the first --web.listen-address>)")
	f.StringVar(&o.logLevel, "log.level", "info", "Log level: debug, info, warn or error")
	f.StringVar(&o.cfg.AlertmanagerUser, "alertmanager.basic-auth-user", "", "Basic auth user for every --alertmanager.url without user info of its own")
	f.StringVar(&o.cfg.AlertmanagerPasswordFile, "alertmanager.basic-auth-password-file", "", "File holding the Alertmanagers' basic auth password (default: $"+serve.EnvAlertmanagerPassword+" if set), for a user of --alertmanager.basic-auth-user or a --alertmanager.url's user info")
	f.StringVar(&o.cfg.PushTokenFile, "push.bearer-token-file", "", "File holding a bearer token for --push.url (default: $"+serve.EnvPushToken+" if set)")
	f.StringVar(&o.cfg.StateFile, "state.file", "", "File keeping the alerts being sent across restarts (written atomically after each analysis), so that a restart neither resolves nor re-fires them; on a volume that outlives the container")
	f.DurationVar(&o.cfg.ShutdownTimeout, "web.shutdown-timeout", 5*time.Second, "How long in-flight requests and queued alerts get on SIGTERM")
	return c
}

func runServe(ctx context.Context, o *serveOptions, stderr io.Writer) error {
	logger, err := newLogger(o.logLevel, stderr)
	if err != nil {
		return err
	}
	open := func(ctx context.Context) (*session.Session, error) { return o.src.open(ctx, o.now(), logger, nil) }
	c := o.cfg
	c.Open, c.Exit, c.TimelinePoints, c.Since, c.Logger = open, o.src.exit, timelinePoints, o.src.Since, logger
	err = serve.Run(ctx, c)
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
