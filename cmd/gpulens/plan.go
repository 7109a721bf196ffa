package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/session"
)

type planOptions struct {
	reading
	models   []string
	replicas int
	nodeGPUs int
	asIs     bool
}

func newPlanCmd() *cobra.Command {
	o := &planOptions{}
	c := o.command("plan", "Plan how many nodes and GPUs each node pool needs, and the layout that gets there, proven on the window",
		manifest.WithKustomize(plan.Formats), func(ctx context.Context, stdout, stderr io.Writer) error {
			return runPlan(ctx, o, stdout, stderr)
		})
	f := c.Flags()
	f.StringSliceVar(&o.models, "model", nil, "Plan only these GPU models (catalog key or product name; repeatable)")
	f.IntVar(&o.nodeGPUs, "node-gpus", 0, "GPUs per node, for pools whose series carry no node label (default: counted from the series)")
	f.BoolVar(&o.asIs, "as-is", false, "Plan today's fleet as it is; by default the plan is of the fleet after the week's advice, without the allocations 'gpulens recommend' releases")
	f.IntVar(&o.replicas, "max-replicas", 0, "Most time-slicing replicas per GPU (default: recommend.max_replicas of --config)")
	return c
}

func runPlan(ctx context.Context, o *planOptions, stdout, stderr io.Writer) error {
	s, err := o.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	p, err := s.Plan(ctx, session.PlanOptions{Models: o.models, MaxReplicas: o.replicas, NodeGPUs: o.nodeGPUs, AsIs: o.asIs})
	if err != nil {
		return o.src.exit(err)
	}
	return o.write(stdout, func() []manifest.Doc { return manifest.FromPlan(p) }, "Nothing to plan.",
		func(w io.Writer, format string) error { return plan.Write(w, p, format) })
}
