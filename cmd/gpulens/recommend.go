package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/report"
)

type recommendOptions struct {
	src    sourceFlags
	format string
	output string
	all    bool
	now    func() time.Time
}

func newRecommendCmd() *cobra.Command {
	o := &recommendOptions{now: time.Now}
	c := &cobra.Command{
		Use:     "recommend",
		GroupID: "basic",
		Short:   "List findings and right-sizing recommendations with their monthly savings",
		Long:    help("recommend"),
		Example: `  # What to change, from last week's data in Prometheus
  gpulens recommend --prometheus-url http://prometheus:9090 --since 7d

  # Every finding as JSON, from the TSDB 'gpulens demo --data-dir' kept
  gpulens recommend --data-dir ./demo-data --format json --all

  # The patches, ready to review and apply
  gpulens recommend --prometheus-url http://prometheus:9090 --format yaml > patches.yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runRecommend(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	f.StringVar(&o.format, "format", "table", "Output format: "+strings.Join(report.RecommendFormats, ", "))
	f.StringVarP(&o.output, "output", "o", "", "Write to this file (atomically) instead of standard output")
	f.BoolVar(&o.all, "all", false, "Also list info findings that carry no change and no savings (table and json)")
	return c
}

func runRecommend(ctx context.Context, o *recommendOptions, stdout, stderr io.Writer) error {
	if err := checkFormat(o.format, report.RecommendFormats); err != nil {
		return err
	}
	a, err := o.src.analyze(ctx, o.now(), stderr)
	if err != nil {
		return err
	}
	for _, s := range a.Findings.Skipped {
		fmt.Fprintf(stderr, "skipped: %s\n", s)
	}
	var buf bytes.Buffer
	if err := report.WriteRecommendations(&buf, report.SelectFindings(a.Findings.Findings, o.all), o.format); err != nil {
		return err
	}
	return writeOutput(stdout, o.output, buf.Bytes())
}
