package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/session"
)

type planOptions struct {
	src      sourceFlags
	format   string
	file     string
	models   []string
	replicas int
	nodeGPUs int
	now      func() time.Time
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
	f.StringSliceVar(&o.models, "model", nil, "Plan only these GPU models (catalog key or product name; repeatable)")
	f.IntVar(&o.nodeGPUs, "node-gpus", 0, "GPUs per node, for pools whose series carry no node label (default: counted from the series)")
	f.IntVar(&o.replicas, "max-replicas", 0, "Most time-slicing replicas per GPU (default: recommend.max_replicas of --config)")
	return c
}

func runPlan(ctx context.Context, o *planOptions, stdout, stderr io.Writer) error {
	if err := checkFormat(o.format, plan.Formats); err != nil {
		return err
	}
	s, err := o.src.open(ctx, o.now(), stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	p, err := s.Plan(ctx, session.PlanOptions{Models: o.models, MaxReplicas: o.replicas, NodeGPUs: o.nodeGPUs})
	if err != nil {
		return o.src.exit(err)
	}
	var buf bytes.Buffer
	if err := plan.Write(&buf, p, o.format); err != nil {
		return err
	}
	return writeOutput(stdout, o.file, buf.Bytes())
}
