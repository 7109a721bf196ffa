package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/gpulens/gpulens/signals/native"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/cmd/gpulens/internal/progress"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
)

type demoOptions struct {
	scenario    string
	end         string
	duration    string
	step        time.Duration
	dataDir     string
	openMetrics string
	out         outputFlags
	quiet       bool
}

func newDemoCmd() *cobra.Command {
	o := &demoOptions{}
	c := &cobra.Command{
		Use:     "demo",
		GroupID: "basic",
		Short:   "Simulate a GPU fleet for a week through the real exporter and analyze it",
		Long: `Simulate a GPU fleet through the real exporter code and analyze it.

The default scenario has 5 nodes and 36 GPUs: H100 and H200 with MIG, MPS, time-sliced A100
and L4 inference nodes, and an H100 node whose GPUs are allocated through DRA ResourceClaims,
with idle notebooks, underused inference and a memory leak. Every
simulated minute, each node's GPUs are read by the exporter's NVML code (over go-nvml's mock
servers) and its series are appended to an embedded Prometheus TSDB at the simulated time. The
week is then analyzed with the same PromQL that runs against a real Prometheus.

The simulated week ends now, unless --end says otherwise, so a later
'gpulens report --data-dir DIR --since 7d' finds it.`,
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
	o.out.register(f, report.Formats, "table")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "No progress line on a terminal (there is none when standard error is not a terminal)")
	return c
}

func runDemo(ctx context.Context, o *demoOptions, stdout, stderr io.Writer) error {
	if err := o.out.resolve(stderr); err != nil {
		return err
	}
	dur, err := parseWindow(o.duration)
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

	dir := o.dataDir
	if dir != "" {
		// A second week written over the first would interleave two
		// simulations in one store; refuse rather than mix or delete.
		if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
			return usageError{fmt.Errorf("--data-dir: %s is not empty (a TSDB from an earlier run?); remove it or name a new directory", dir)}
		}
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "gpulens-demo-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	db, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		return exitError{code: exitData, err: err}
	}
	defer db.Close()

	start := end.Add(-dur)
	bar := progress.New(stderr, "simulating", o.quiet)
	// The nodes advance together, so the share of node-steps done is the
	// share of the window simulated.
	days := dur.Hours() / 24
	bar.Detail = func(done, total int) string {
		return fmt.Sprintf("day %.1f of %.4g", days*float64(done)/float64(max(total, 1)), days)
	}
	var samples atomic.Int64
	t0 := time.Now()
	err = fleet.Run(ctx, fleet.Options{Scenario: sc, Start: start, End: end, Step: o.step, Progress: bar.Set},
		func(node string) fleet.Sink {
			return fleet.NewTSDBSink(ctx, db, &samples).WithTarget("gpulens-exporter", node+":9845")
		})
	bar.Done()
	if err != nil {
		return err
	}
	if o.dataDir != "" {
		// Kept for later reports, which open it read-only and would
		// otherwise replay the head's last hours from the WAL.
		if err := db.PersistHead(ctx); err != nil {
			return err
		}
	}
	if o.openMetrics != "" {
		if err := exportOpenMetrics(ctx, db, o.openMetrics, start, end); err != nil {
			return err
		}
	}

	fmt.Fprintf(stderr, "Simulated %d nodes for %s to %s (%d steps, %d samples) in %.1fs.\n",
		len(sc.Nodes), start.Format("2006-01-02 15:04"), end.Format("2006-01-02 15:04 MST"),
		int(dur/o.step)+1, samples.Load(), time.Since(t0).Seconds())

	t1 := time.Now()
	s, err := session.New(ctx, db, session.Config{Schema: native.SchemaName, Start: start, End: end, Step: o.step,
		NoKubernetes: "the demo simulates its fleet, with no cluster", Observer: newProgressLine(stderr, o.quiet)})
	if err != nil {
		return err
	}
	defer s.Close()
	r, a, err := s.Report(ctx, timelinePoints)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Analyzed with the %s schema: %d PromQL queries per window in %.1fs.\n",
		a.Schema.Name(), a.Current.QueryCount, time.Since(t1).Seconds())
	if o.dataDir != "" {
		fmt.Fprintf(stderr, "The TSDB is kept in %s: gpulens report --data-dir %s --since %s\n", o.dataDir, o.dataDir, o.duration)
	}
	var buf bytes.Buffer
	if err := report.Render(&buf, r, o.out.format); err != nil {
		return err
	}
	return writeOutput(stdout, o.out.file, buf.Bytes())
}
