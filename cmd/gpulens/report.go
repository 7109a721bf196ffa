package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/outputflag"
	"github.com/gpulens/gpulens/internal/webhook"
)

type reportOptions struct {
	src     sourceFlags
	out     outputflag.Flags
	webhook string
	// webhookFile holds the webhook URL; getenv reads $GPULENS_WEBHOOK_URL.
	webhookFile string
	getenv      func(string) string
	// webhookBackoff is the first retry wait; tests shorten it.
	webhookBackoff time.Duration
	now            func() time.Time
}

// webhookEnv holds the webhook URL where no flag names one.
const webhookEnv = report.WebhookEnv

// webhookURL is the webhook --send-webhook, --send-webhook-file or
// $GPULENS_WEBHOOK_URL names, "" for none.
func (o *reportOptions) webhookURL() (string, error) {
	u, err := report.WebhookURL(o.webhook, o.webhookFile, o.getenv)
	var we *report.WebhookURLError
	if errors.As(err, &we) {
		return "", usageError{we.Err}
	}
	return u, err
}

// timelinePoints is the resolution of the utilization-over-time charts:
// hourly for a week.
const timelinePoints = 168

func newReportCmd() *cobra.Command {
	o := &reportOptions{now: time.Now, webhookBackoff: time.Second, getenv: os.Getenv}
	c := &cobra.Command{
		Use:     "report",
		GroupID: "basic",
		Short:   "Report each team's GPU allocation, use, cost and waste for a window",
		Long:    help("report"),
		Example: `  # Last week's report from Prometheus, as a table
  gpulens report --prometheus-url http://prometheus:9090 --since 7d

  # From the TSDB 'gpulens demo --data-dir' kept
  gpulens report --data-dir ./demo-data -o markdown

  # An HTML page with charts, for a given week, teams from the namespace label "owner"
  gpulens report --prometheus-url http://prometheus:9090 --until 2026-03-16T00:00:00Z \
    --team-label owner -o html --output-file week-11.html

  # Mimir with a tenant header and a token, posted to Slack
  gpulens report --prometheus-url https://mimir/prometheus --header X-Scope-OrgID=gpu \
    --bearer-token-file /var/run/secrets/token --send-webhook-file /var/run/secrets/slack-url`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runReport(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	o.out.Register(f, report.Formats, "table")
	f.StringVar(&o.src.CostBasis, "cost-basis", "allocation", "Basis of the teams' cost column: allocation (what each team held) or usage (what it used); the reconciliation section, the JSON, the CSV and -o ledger-csv (every GPU, hour and tenant) have both")
	f.StringVar(&o.webhook, "send-webhook", "", "Also post the Markdown report to this Slack-compatible incoming webhook URL (shown by ps: prefer --send-webhook-file or $"+webhookEnv+")")
	f.StringVar(&o.webhookFile, "send-webhook-file", "", "File holding the incoming webhook URL to post the Markdown report to (default: $"+webhookEnv+" if set)")
	return c
}

func runReport(ctx context.Context, o *reportOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.out.Resolve(stderr); err != nil {
		return err
	}
	// Checked before the analysis, which may take minutes.
	hookURL, err := o.webhookURL()
	if err != nil {
		return err
	}
	s, err := o.src.open(ctx, o.now(), stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	r, a, err := s.Report(ctx, timelinePoints)
	if err != nil {
		return o.src.exit(err)
	}
	sayDetected(stderr, a)

	var buf bytes.Buffer
	if err := report.Render(&buf, r, o.out.Format); err != nil {
		return err
	}
	if err := outputflag.Write(stdout, o.out.File, buf.Bytes()); err != nil {
		return err
	}

	if hookURL != "" {
		md, err := report.WebhookText(r)
		if err != nil {
			return err
		}
		hook := webhook.Hook{URL: hookURL, Retries: 3, Backoff: o.webhookBackoff}
		if err := hook.Send(ctx, report.WebhookPayload(md)); err != nil {
			return fmt.Errorf("the report was not sent: %w", err)
		}
		fmt.Fprintln(stderr, "Sent the report to the webhook.")
	}
	return nil
}
