package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/schema"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/internal/progress"
)

type planOptions struct {
	src      sourceFlags
	format   string
	file     string
	step     time.Duration
	models   []string
	replicas int
	now      func() time.Time
}

func newPlanCmd() *cobra.Command {
	o := &planOptions{now: time.Now}
	c := &cobra.Command{
		Use:     "plan",
		GroupID: "basic",
		Short:   "Plan how many GPUs each node pool needs, and the layout that gets there, proven on the window",
		Long: `Plan how many GPUs each GPU model (node pool) needs if every workload got what it uses and
shared GPUs were packed sensibly, and the layout that gets there.

The plan reads every workload's memory in use and load on the GPU at every step of the
window (not summaries), so workloads that take turns can share a GPU and two whose peaks
coincide do not. Each planned GPU is whole, a MIG geometry the model can hold, or
time-sliced into N replicas; each workload replica is assigned a place:
  - memory fits with a margin at every step, growth of a leaking workload included;
  - training-like workloads (p95 utilization of a GPU or slice held alone, or p95 load of
    a shared GPU, at training.min_load or more, see --config) get a whole GPU or a MIG
    slice, never a time-sliced replica; jobs that never run at the same time may take
    turns on one whole GPU;
  - a shared GPU or slice carries its p95 load under recommend.compute_target;
  - at most --max-replicas time-slicing replicas per GPU.
The search is first-fit-decreasing over (p99 memory, p95 load) under three placement
strategies, refined by a local search that empties GPUs; pools of up to 10 replicas are
solved exactly.

Before it is printed, the measured window is replayed on the layout: a plan with a step at
which memory in use exceeds a GPU's or a slice's capacity is an error, not a plan. The
replay also counts the contended steps of each shared GPU (summed load above the GPU).

Formats (--format): table for people (GPUs today and needed per model with the monthly saving,
the layout, the replay, where each workload goes), json, yaml (the device plugin sharing
config per node group, then each workload's new GPU request as a strategic-merge patch).

Exit codes: 1 the plan failed its replay, 2 bad flags or input files (an unknown --model),
3 the metrics source cannot be queried, 4 no GPU series in the window, 5 the data
directory is not a usable TSDB.`,
		Example: `  # The plan for last week's fleet, from Prometheus
  gpulens plan --prometheus-url http://prometheus:9090 --since 7d

  # From the TSDB 'gpulens demo --data-dir' kept, the A100 pool only, as JSON
  gpulens plan --data-dir ./demo-data --model A100-80GB --format json

  # The device plugin configs and the patches, ready to review
  gpulens plan --prometheus-url http://prometheus:9090 --format yaml -o plan.yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runPlan(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	f.StringVar(&o.format, "format", "table", "Output format: "+strings.Join(plan.Formats, ", "))
	f.StringVarP(&o.file, "output", "o", "", "Write to this file (atomically) instead of standard output")
	f.DurationVar(&o.step, "step", time.Minute, "Resolution of the per-step usage the plan is made and replayed on")
	f.StringSliceVar(&o.models, "model", nil, "Plan only these GPU models (catalog key or product name; repeatable)")
	f.IntVar(&o.replicas, "max-replicas", 0, "Most time-slicing replicas per GPU (default: recommend.max_replicas of --config)")
	return c
}

func runPlan(ctx context.Context, o *planOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if !slices.Contains(plan.Formats, o.format) {
		return usageError{fmt.Errorf("--format: unknown format %q (want %s)", o.format, strings.Join(plan.Formats, ", "))}
	}
	if o.step <= 0 {
		return usageError{fmt.Errorf("--step: %s is not a positive duration", o.step)}
	}
	if o.replicas != 0 && (o.replicas < 2 || o.replicas > 48) {
		return usageError{fmt.Errorf("--max-replicas: %d, want 2..48 (48 is the device plugin's limit)", o.replicas)}
	}
	start, end, err := o.src.window(o.now())
	if err != nil {
		return err
	}
	cfg, prices, err := o.src.settings()
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	src, err := o.src.open(logger)
	if err != nil {
		return err
	}
	defer src.Close()
	sch, err := planSchema(ctx, o.src.schema, src, start, end)
	if err != nil {
		if ee := (exitError{}); errors.As(err, &ee) {
			return err
		}
		return o.src.analysisExit(err)
	}
	inv := o.src.inventory(ctx, logger)

	bar := progress.New(stderr, "reading usage", o.src.quiet)
	bar.Set(0, 2)
	data, err := plan.Fetch(ctx, src, sch, plan.FetchOptions{
		Start: start, End: end, Step: o.step, Workload: inv.WorkloadOf,
		TrainingMinLoad: cfg.Training.MinLoad, TrainingMinHours: cfg.Training.MinHours,
		GrowthHorizon: time.Duration(cfg.OOMRisk.GrowthHorizonHours * float64(time.Hour)),
	})
	bar.Set(1, 2)
	if err != nil {
		bar.Done()
		if errors.Is(err, plan.ErrNoData) {
			return exitError{code: exitNoData, err: err}
		}
		return o.src.analysisExit(err)
	}
	if data.Pools, err = selectPools(data.Pools, o.models); err != nil {
		bar.Done()
		return err
	}
	pol := plan.DefaultPolicy()
	pol.MemoryMargin, pol.ComputeTarget, pol.MaxReplicas = cfg.Recommend.MemoryMargin, cfg.Recommend.ComputeTarget, cfg.Recommend.MaxReplicas
	if o.replicas != 0 {
		pol.MaxReplicas = o.replicas
	}
	p, err := plan.Make(data, pol, prices)
	bar.Done()
	if err != nil {
		if errors.Is(err, plan.ErrReplay) {
			return exitError{code: exitFailure, err: fmt.Errorf("%w; no plan is printed", err)}
		}
		return exitError{code: exitNoData, err: err}
	}
	if !inv.Available {
		p.Notes = append(p.Notes, "no cluster access: workloads are inferred from pod names")
	}
	var buf bytes.Buffer
	if err := plan.Write(&buf, p, o.format); err != nil {
		return err
	}
	if o.file != "" {
		return report.WriteFile(o.file, buf.Bytes())
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// planSchema resolves --schema as the pipeline does: a name, or detection
// from the metric names present.
func planSchema(ctx context.Context, name string, src source.Source, start, end time.Time) (schema.Schema, error) {
	if name != "" && name != pipeline.SchemaAuto {
		return schema.ByName(name)
	}
	sch, err := schema.Detect(ctx, src, start, end)
	if err != nil && errors.Unwrap(err) == nil {
		// Detect's bare error is "no metrics of any schema": the window
		// is empty, or the wrong one.
		return nil, exitError{code: exitNoData, err: fmt.Errorf("no GPU series to plan from: %w", err)}
	}
	return sch, err
}

// selectPools keeps the pools --model names; a name that matches none is
// a usage error naming the models there are.
func selectPools(pools []*plan.Pool, models []string) ([]*plan.Pool, error) {
	if len(models) == 0 {
		return pools, nil
	}
	var out []*plan.Pool
	var have []string
	for _, p := range pools {
		have = append(have, p.Model.Key)
	}
	for _, m := range models {
		k := slices.IndexFunc(pools, func(p *plan.Pool) bool {
			return strings.EqualFold(p.Model.Key, m) || strings.EqualFold(p.Product, m)
		})
		if k < 0 {
			return nil, usageError{fmt.Errorf("--model: no GPUs of model %q in the window (models there: %s; models the catalog does not know are not planned)", m, strings.Join(have, ", "))}
		}
		if !slices.Contains(out, pools[k]) {
			out = append(out, pools[k])
		}
	}
	return out, nil
}

// consolidation plans the report's window for its "Consolidation"
// section. A plan that cannot be made is said in the section, never a
// failed report: the report's figures do not depend on it.
func (f *sourceFlags) consolidation(ctx context.Context, a *pipeline.Analysis, stderr io.Writer) *report.Consolidation {
	cfg, prices, err := f.settings()
	if err != nil {
		return &report.Consolidation{Unavailable: err.Error()}
	}
	src, err := f.open(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return &report.Consolidation{Unavailable: err.Error()}
	}
	defer src.Close()
	return consolidate(ctx, src, a, cfg, prices, progress.New(stderr, "planning", f.quiet))
}

// consolidate is consolidation on an open source, as the demo has one.
func consolidate(ctx context.Context, src source.Source, a *pipeline.Analysis, cfg findings.Config, prices *recommend.Prices, bar *progress.Bar) *report.Consolidation {
	defer bar.Done()
	unavailable := func(err error) *report.Consolidation {
		return &report.Consolidation{Unavailable: err.Error()}
	}
	sch, err := schema.ByName(a.Schema)
	if err != nil {
		return unavailable(err)
	}
	w := a.Current.Window
	data, err := plan.Fetch(ctx, src, sch, plan.FetchOptions{
		Start: w.Start, End: w.End, Step: w.Step, Workload: a.Inventory.WorkloadOf,
		TrainingMinLoad: cfg.Training.MinLoad, TrainingMinHours: cfg.Training.MinHours,
		GrowthHorizon: time.Duration(cfg.OOMRisk.GrowthHorizonHours * float64(time.Hour)),
	})
	if err != nil {
		return unavailable(err)
	}
	pol := plan.DefaultPolicy()
	pol.MemoryMargin, pol.ComputeTarget, pol.MaxReplicas = cfg.Recommend.MemoryMargin, cfg.Recommend.ComputeTarget, cfg.Recommend.MaxReplicas
	p, err := plan.Make(data, pol, prices)
	if err != nil {
		return unavailable(err)
	}
	c := &report.Consolidation{GPUsToday: p.GPUsToday, GPUsNeeded: p.GPUsNeeded, MonthlySaving: p.MonthlySavingUSD}
	for _, pp := range p.Pools {
		c.SavingKnown = c.SavingKnown || pp.MonthlySavingUSD != nil
		c.ReplaySteps = max(c.ReplaySteps, pp.Replay.Steps)
		c.OvercommittedSteps += pp.Replay.OvercommittedSteps
		c.Pools = append(c.Pools, report.ConsolidationPool{Model: pp.Model, GPUsToday: pp.GPUsToday, GPUsNeeded: pp.GPUsNeeded})
	}
	return c
}
