package main

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/internal/outputflag"
)

type planOptions struct {
	src       sourceFlags
	out       outputflag.Flags
	models    []string
	replicas  int
	nodeGPUs  int
	now       func() time.Time
	outputDir string
	asIs      bool
}

func newPlanCmd() *cobra.Command {
	o := &planOptions{now: time.Now}
	c := &cobra.Command{
		Use:     "plan",
		GroupID: "basic",
		Short:   "Plan how many nodes and GPUs each node pool needs, and the layout that gets there, proven on the window",
		Long:    help("plan"),
		Example: `  # The plan for last week's fleet, from Prometheus
  gpulens plan --prometheus-url http://prometheus:9090 --since 7d

  # From the TSDB 'gpulens demo --data-dir' kept, the A100 pool only, as JSON
  gpulens plan --data-dir ./demo-data --model A100-80GB -o json

  # The device plugin configs and the patches, ready to review
  gpulens plan --prometheus-url http://prometheus:9090 -o yaml --output-file plan.yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runPlan(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	o.out.Register(f, manifest.WithKustomize(plan.Formats), "table")
	registerOutputDir(f, &o.outputDir)
	f.StringSliceVar(&o.models, "model", nil, "Plan only these GPU models (catalog key or product name; repeatable)")
	f.IntVar(&o.nodeGPUs, "node-gpus", 0, "GPUs per node, for pools whose series carry no node label (default: counted from the series)")
	f.BoolVar(&o.asIs, "as-is", false, "Plan today's fleet as it is; by default the plan is of the fleet after the week's advice, without the allocations 'gpulens recommend' releases")
	f.IntVar(&o.replicas, "max-replicas", 0, "Most time-slicing replicas per GPU (default: recommend.max_replicas of --config)")
	return c
}

func runPlan(ctx context.Context, o *planOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.out.Resolve(stderr); err != nil {
		return err
	}
	if err := manifest.CheckOutput(o.out.Format, o.out.File, o.outputDir); err != nil {
		return err
	}
	s, err := o.src.open(ctx, o.now(), stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	p, err := s.Plan(ctx, session.PlanOptions{Models: o.models, MaxReplicas: o.replicas, NodeGPUs: o.nodeGPUs, AsIs: o.asIs})
	if err != nil {
		return o.src.exit(err)
	}
	if ok, err := manifest.WriteOutput(stdout, o.out.Format, o.out.File, o.outputDir, func() []manifest.Doc { return manifest.FromPlan(p) }, "Nothing to plan."); ok {
		return err
	}
	var buf bytes.Buffer
	if err := plan.Write(&buf, p, o.out.Format); err != nil {
		return err
	}
	return outputflag.Write(stdout, o.out.File, buf.Bytes())
}
