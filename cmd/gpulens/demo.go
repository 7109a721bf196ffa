package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/demo"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/outputflag"
)

type demoOptions struct {
	flags demo.Flags
	out   outputflag.Flags
}

func newDemoCmd() *cobra.Command {
	o := &demoOptions{}
	c := &cobra.Command{
		Use:     "demo",
		GroupID: "basic",
		Short:   "Simulate a GPU fleet for a week through the real exporter and analyze it",
		Long:    demo.Help(help("demo")),
		Example: examples("demo"),
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runDemo(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	f.StringVar(&o.flags.Scenario, "scenario", "", "Scenario file of the simulated fleet (default: the embedded 5-node scenario)")
	f.StringVar(&o.flags.End, "end", "", "End of the simulated week, RFC 3339 (default: now)")
	f.StringVar(&o.flags.Duration, "duration", "7d", "Length of the simulated window (e.g. 7d, 36h)")
	f.DurationVar(&o.flags.Step, "step", time.Minute, "Sampling resolution of the simulation (the scrape interval)")
	f.DurationVar(&o.flags.PreviousStep, "previous-step", 5*time.Minute, "Also simulate the window before, at this coarser scrape interval, for the report's change against it (0: none)")
	f.StringVar(&o.flags.DataDir, "data-dir", "", "Keep the TSDB in this directory (default: a temporary one, removed afterwards)")
	f.StringVar(&o.flags.OpenMetrics, "export-openmetrics", "", "Also write the simulated samples as OpenMetrics to this file")
	o.out.Register(f, report.Formats, "table")
	f.BoolVarP(&o.flags.Quiet, "quiet", "q", false, "No progress line on a terminal (there is none when standard error is not a terminal)")
	return c
}

func runDemo(ctx context.Context, o *demoOptions, stdout, stderr io.Writer) error {
	if err := o.out.Resolve(stderr); err != nil {
		return err
	}
	opts, err := o.flags.Options(time.Now())
	if err != nil {
		return err
	}
	opts.TimelinePoints, opts.Stderr, opts.Program = timelinePoints, stderr, program()
	r, err := demo.Run(ctx, opts)
	var se *demo.StoreError
	if errors.As(err, &se) {
		return exitError{code: exitData, err: se.Err}
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := report.Render(&buf, r, o.out.Format); err != nil {
		return err
	}
	return outputflag.Write(stdout, o.out.File, buf.Bytes())
}

// program is how the demo's closing hint names gpulens: as it was run
// where that was a relative path (./bin/gpulens, the README's), else
// "gpulens" (on the PATH, or a go run's temporary binary).
func program() string {
	if p := os.Args[0]; strings.Contains(p, "/") && !filepath.IsAbs(p) {
		return p
	}
	return "gpulens"
}
