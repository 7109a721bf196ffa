package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/report"
)

type reportOptions struct {
	src     sourceFlags
	out     outputFlags
	webhook string
	// webhookFile holds the webhook URL; getenv reads $GPULENS_WEBHOOK_URL.
	webhookFile string
	getenv      func(string) string
	// webhookBackoff is the first retry wait; tests shorten it.
	webhookBackoff time.Duration
	now            func() time.Time
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
		Long: `Report each team's GPU allocation, use, cost and waste for a window, usually a week.

The report has the cluster summary (fleet by GPU model, allocated and unallocated GPU-hours,
average utilization, cost and estimated waste), one row per team (a namespace's team label,
or the namespace) with allocated, used and idle GPU-hours, efficiency, cost, waste and the
change against the previous window of the same length, the recommendations that save the
most, the findings by severity, and how much of the window the data covers.

With a Slack-compatible incoming webhook, the Markdown report is also posted there (its teams
table cut to the 15 that held the most GPU-hours, the message to 24 KiB). The webhook's URL is
its credential: give it in a file (--send-webhook-file) or in $GPULENS_WEBHOOK_URL rather
than as --send-webhook's value, which ps and the shell's history show.

Used GPU-hours are allocated GPU-hours times utilization, capped at 1; hours without a
utilization sample are reported as unmeasured, never as idle.

Exit codes: 2 bad flags or input files, 3 the metrics source cannot be queried,
4 no GPU series in the window, 5 the data directory is not a usable TSDB.`,
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
	o.out.register(f, report.Formats, "table")
	f.StringVar(&o.webhook, "send-webhook", "", "Also post the Markdown report to this Slack-compatible incoming webhook URL (shown by ps: prefer --send-webhook-file or $"+webhookEnv+")")
	f.StringVar(&o.webhookFile, "send-webhook-file", "", "File holding the incoming webhook URL to post the Markdown report to (default: $"+webhookEnv+" if set)")
	return c
}

func runReport(ctx context.Context, o *reportOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.out.resolve(stderr); err != nil {
		return err
	}
	// Checked before the analysis, which may take minutes.
	webhook, err := o.webhookURL()
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
	if err := report.Render(&buf, r, o.out.format); err != nil {
		return err
	}
	if err := writeOutput(stdout, o.out.file, buf.Bytes()); err != nil {
		return err
	}

	if webhook != "" {
		md, err := report.WebhookText(r)
		if err != nil {
			return err
		}
		hook := report.Webhook{URL: webhook, Retries: 3, Backoff: o.webhookBackoff}
		if err := hook.Send(ctx, md); err != nil {
			return fmt.Errorf("the report was not sent: %w", err)
		}
		fmt.Fprintln(stderr, "Sent the report to the webhook.")
	}
	return nil
}
