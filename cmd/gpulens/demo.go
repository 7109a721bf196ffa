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

	"github.com/gpulens/gpulens/analyzer/demo"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/internal/outputflag"
)

type demoOptions struct {
	scenario    string
	end         string
	duration    string
	step        time.Duration
	dataDir     string
	openMetrics string
	out         outputflag.Flags
	quiet       bool
}

func newDemoCmd() *cobra.Command {
	o := &demoOptions{}
	c := &cobra.Command{
		Use:     "demo",
		GroupID: "basic",
		Short:   "Simulate a GPU fleet for a week through the real exporter and analyze it",
		Long:    help("demo"),
		Example: `  # Run the default demo and print the analysis
  gpulens demo

  # Keep the TSDB for later reports, and export the week for promtool or VictoriaMetrics
  gpulens demo --data-dir ./demo-data --export-openmetrics week.om

  # Your own fleet, as an HTML report
  gpulens demo --scenario my-fleet.yaml -o html --output-file week.html`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runDemo(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	f.StringVar(&o.scenario, "scenario", "", "Scenario file of the simulated fleet (default: the embedded 5-node scenario)")
	f.StringVar(&o.end, "end", "", "End of the simulated week, RFC 3339 (default: now)")
	f.StringVar(&o.duration, "duration", "7d", "Length of the simulated window (e.g. 7d, 36h)")
	f.DurationVar(&o.step, "step", time.Minute, "Sampling resolution of the simulation (the scrape interval)")
	f.StringVar(&o.dataDir, "data-dir", "", "Keep the TSDB in this directory (default: a temporary one, removed afterwards)")
	f.StringVar(&o.openMetrics, "export-openmetrics", "", "Also write the simulated samples as OpenMetrics to this file")
	o.out.Register(f, report.Formats, "table")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "No progress line on a terminal (there is none when standard error is not a terminal)")
	return c
}

func runDemo(ctx context.Context, o *demoOptions, stdout, stderr io.Writer) error {
	if err := o.out.Resolve(stderr); err != nil {
		return err
	}
	dur, err := session.ParseWindow(o.duration)
	if err != nil {
		return usageError{fmt.Errorf("--duration: %w", err)}
	}
	if o.step <= 0 || o.step > time.Hour {
		return usageError{fmt.Errorf("--step: %s is outside (0, 1h]", o.step)}
	}
	end := time.Now().UTC().Truncate(o.step)
	if o.end != "" {
		if end, err = time.Parse(time.RFC3339, o.end); err != nil {
			return usageError{fmt.Errorf("--end: %q is not an RFC 3339 time such as 2026-01-05T14:00:00Z", o.end)}
		}
	}
	sc := sim.Default()
	if o.scenario != "" {
		if sc, err = sim.Load(o.scenario); err != nil {
			return exitError{code: exitUsage, err: err}
		}
	}
	if o.dataDir != "" {
		// A second week written over the first would interleave two
		// simulations in one store; refuse rather than mix or delete.
		if ents, err := os.ReadDir(o.dataDir); err == nil && len(ents) > 0 {
			return usageError{fmt.Errorf("--data-dir: %s is not empty (a TSDB from an earlier run?); remove it or name a new directory", o.dataDir)}
		}
	}
	r, err := demo.Run(ctx, demo.Options{Scenario: sc, Start: end.Add(-dur), End: end, Step: o.step, Length: o.duration,
		DataDir: o.dataDir, OpenMetrics: o.openMetrics, TimelinePoints: timelinePoints, Stderr: stderr, Quiet: o.quiet})
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
