// Package demo is `gpulens demo`'s work: a scenario's fleet simulated
// through the real exporter code into an embedded TSDB, then analysed as
// `gpulens report` analyses a store.
package demo

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/internal/progress"
	"github.com/gpulens/gpulens/signals/native"
)

// Options are the demo's, its flags parsed.
type Options struct {
	Scenario   *sim.Scenario
	Start, End time.Time
	Step       time.Duration
	// PreviousStep, when positive, also simulates the window of the same
	// length before Start at that (coarser) scrape interval, so that the
	// report's change against the previous window has data: the column a
	// team lead reads first. The previous window costs a fifth of the
	// week's time at 5m.
	PreviousStep time.Duration
	// Length is the window's length as given (--duration), for the hint
	// that tells how to report on a kept TSDB again.
	Length string
	// DataDir keeps the TSDB there; "" simulates into a temporary one,
	// removed afterwards.
	DataDir string
	// OpenMetrics, when set, is a file the simulated samples are also
	// written to.
	OpenMetrics string
	// TimelinePoints is the report's timeline resolution.
	TimelinePoints int
	// Stderr gets the progress lines and what was done; Quiet hides the
	// progress lines.
	Stderr io.Writer
	Quiet  bool
	// Program is how the closing hint names gpulens ("gpulens" if empty):
	// the CLI passes the path it was run as, so that the hint runs as
	// printed (./bin/gpulens after make demo).
	Program string
}

// StoreError is a TSDB the demo could not open: the CLI's data error.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// Run simulates the scenario over the window and returns its report.
func Run(ctx context.Context, o Options) (*report.Report, error) {
	stderr := o.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	dir := o.DataDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "gpulens-demo-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	db, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		return nil, &StoreError{err}
	}
	defer db.Close()

	start, end, dur := o.Start, o.End, o.End.Sub(o.Start)
	bar := progress.New(stderr, "simulating", o.Quiet)
	// The nodes advance together, so the share of node-steps done is the
	// share of the window simulated.
	days := dur.Hours() / 24
	bar.Detail = func(done, total int) string {
		return fmt.Sprintf("day %.1f of %.4g", days*float64(done)/float64(max(total, 1)), days)
	}
	var samples atomic.Int64
	t0 := time.Now()
	sinks := func(node string) fleet.Sink {
		exporter := fleet.NewTSDBSink(ctx, db, &samples).WithTarget("gpulens-exporter", node+":9845")
		if !sharesWithHAMi(o.Scenario, node) {
			return exporter
		}
		// HAMi's series, scraped from a target of their own (the
		// vGPU monitor's port); the scheduler's go with them.
		return fleet.NewHAMiSink(exporter, fleet.NewTSDBSink(ctx, db, &samples).WithTarget("hami-vgpu-monitor", node+":9394"), o.Scenario, node)
	}
	if o.PreviousStep > 0 {
		// The window before, written first so that every sample is in
		// order; it ends a step before Start, which the current window
		// holds. Its own run: the simulator's pods start over at Start,
		// as after a restart of every workload, and counters reset,
		// which rate and increase read as resets.
		prev := progress.New(stderr, "simulating the previous window", o.Quiet)
		err = fleet.Run(ctx, fleet.Options{Scenario: o.Scenario.Previous(), Start: start.Add(-dur), End: start.Add(-o.PreviousStep), Step: o.PreviousStep, Progress: prev.Set}, sinks)
		prev.Done()
		if err != nil {
			return nil, err
		}
	}
	err = fleet.Run(ctx, fleet.Options{Scenario: o.Scenario, Start: start, End: end, Step: o.Step, Progress: bar.Set}, sinks)
	bar.Done()
	if err != nil {
		return nil, err
	}
	if err := writeQuotas(ctx, db, o.Scenario, start, end, o.Step, &samples); err != nil {
		return nil, err
	}
	if o.DataDir != "" {
		// Kept for later reports, which open it read-only and would
		// otherwise replay the head's last hours from the WAL.
		if err := db.PersistHead(ctx); err != nil {
			return nil, err
		}
	}
	if o.OpenMetrics != "" {
		if err := exportOpenMetrics(ctx, db, o.OpenMetrics, start, end); err != nil {
			return nil, err
		}
	}

	fmt.Fprintf(stderr, "Simulated %d nodes for %s to %s (%d steps, %d samples) in %.1fs.\n",
		len(o.Scenario.Nodes), start.Format("2006-01-02 15:04"), end.Format("2006-01-02 15:04 MST"),
		int(dur/o.Step)+1, samples.Load(), time.Since(t0).Seconds())

	t1 := time.Now()
	s, err := session.New(ctx, db, session.Config{Schema: native.SchemaName, Start: start, End: end, Step: o.Step,
		NoKubernetes: "the demo simulates its fleet, with no cluster", Observer: progress.NewLine(stderr, o.Quiet)})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	r, a, err := s.Report(ctx, o.TimelinePoints)
	if err != nil {
		return nil, err
	}
	mem, err := s.MemoryActivity(ctx)
	if err != nil {
		return nil, err
	}
	r.ReclaimPreview = reclaimPreview(a, mem, r.ReclaimPreview)
	fmt.Fprintf(stderr, "Analyzed with the %s schema: %d PromQL queries per window in %.1fs.\n",
		a.Schema.Name(), a.Current.QueryCount, time.Since(t1).Seconds())
	if o.DataDir != "" {
		fmt.Fprintf(stderr, "The TSDB is kept in %s: %s report --data-dir %s --since %s\n", o.DataDir, cmp.Or(o.Program, "gpulens"), o.DataDir, o.Length)
	}
	return r, nil
}

// sharesWithHAMi says whether node of sc has GPUs shared with HAMi.
func sharesWithHAMi(sc *sim.Scenario, node string) bool {
	for i := range sc.Nodes {
		if sc.Nodes[i].Name == node {
			return sc.Nodes[i].SharesWithHAMi()
		}
	}
	return false
}
