package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/report/send"
)

type reportOptions struct {
	reading
	// webhook and webhookFile are the flags that may name the webhook's
	// URL, which $GPULENS_WEBHOOK_URL names otherwise.
	webhook, webhookFile string
}

// timelinePoints is the resolution of the utilization-over-time charts:
// hourly for a week.
const timelinePoints = 168

func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	c := o.command("report", "Report each team's GPU allocation, use, cost and waste for a window", report.Formats,
		func(ctx context.Context, stdout, stderr io.Writer) error { return runReport(ctx, o, stdout, stderr) })
	f := c.Flags()
	f.StringVar(&o.src.CostBasis, "cost-basis", "allocation", "Basis of the teams' cost column: allocation (what each team held) or usage (what it used); the reconciliation section, the JSON, the CSV and -o ledger-csv (every GPU, hour and tenant) have both")
	f.StringVar(&o.webhook, "send-webhook", "", "Also post the Markdown report to this Slack-compatible incoming webhook URL (shown by ps: prefer --send-webhook-file or $"+report.WebhookEnv+")")
	f.StringVar(&o.webhookFile, "send-webhook-file", "", "File holding the incoming webhook URL to post the Markdown report to (default: $"+report.WebhookEnv+" if set)")
	return c
}

func runReport(ctx context.Context, o *reportOptions, stdout, stderr io.Writer) error {
	// Checked before the analysis, which may take minutes.
	hookURL, err := report.WebhookURL(o.webhook, o.webhookFile, os.Getenv)
	if err != nil {
		return err
	}
	s, err := o.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	r, a, err := s.Report(ctx, timelinePoints)
	if err != nil {
		return o.src.exit(err)
	}
	sayDetected(stderr, a)
	if err := o.write(stdout, nil, "", func(w io.Writer, format string) error { return report.Render(w, r, format) }); err != nil || hookURL == "" {
		return err
	}
	if err := send.Webhook(ctx, hookURL, r); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "Sent the report to the webhook.")
	return nil
}
