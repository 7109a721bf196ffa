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
)

type planOptions struct {
	src      sourceFlags
	out      outputFlags
	models   []string
	replicas int
	nodeGPUs int
	now      func() time.Time
	objects  manifestOutput
}

func newPlanCmd() *cobra.Command {
	o := &planOptions{now: time.Now}
	c := &cobra.Command{
		Use:     "plan",
		GroupID: "basic",
		Short:   "Plan how many nodes and GPUs each node pool needs, and the layout that gets there, proven on the window",
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

The GPUs are then packed on nodes of the pool's shape (the most GPUs a node reported, or
--node-gpus): a pod's GPUs on one node; whole and time-sliced GPUs on nodes of their own,
since the device plugin's config (nvidia.com/device-plugin.config) applies to a whole
node; MIG GPUs on any node, since the MIG manager's config sets each GPU apart. Where a
layout without time-slicing needs fewer nodes, it is kept. Clouds bill nodes: the saving
is the freed nodes' price, and GPUs freed on nodes that stay are headroom, worth $0.

A store shared by several clusters (series carrying the --cluster-label label, as Thanos,
Mimir and the Prometheus Operator's external labels add) is planned cluster by cluster, since a
workload moves only among its own cluster's nodes: each cluster's pools from its own series and
with its own inventory (--context CONTEXT=CLUSTER), each pool and workload naming its cluster,
the totals adding the clusters up.

Before it is printed, the measured window is replayed on the layout: a plan with a step at
which memory in use exceeds a GPU's or a slice's capacity is an error, not a plan. The
replay also counts the contended steps of each shared GPU (summed load above the GPU).

Formats (-o): table for people (nodes and GPUs today and needed per model, headroom and
the monthly saving, the layout by node, the replay, where each workload goes), json, yaml (the
labels of each node, the device plugin's time-slicing configs and the MIG geometries as the GPU
operator's ConfigMaps, then each workload's new GPU request, all Kubernetes objects for
kubectl apply --server-side --force-conflicts -f), kustomize (the same as a directory:
-o kustomize --output-dir DIR, for kubectl apply -k DIR).

Exit codes: 1 the plan failed its replay, 2 bad flags or input files (an unknown --model),
3 the metrics source cannot be queried, 4 no GPU series in the window, 5 the data
directory is not a usable TSDB.`,
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
	o.out.register(f, withKustomize(plan.Formats), "table")
	o.objects.register(f)
	f.StringSliceVar(&o.models, "model", nil, "Plan only these GPU models (catalog key or product name; repeatable)")
	f.IntVar(&o.nodeGPUs, "node-gpus", 0, "GPUs per node, for pools whose series carry no node label (default: counted from the series)")
	f.IntVar(&o.replicas, "max-replicas", 0, "Most time-slicing replicas per GPU (default: recommend.max_replicas of --config)")
	return c
}

func runPlan(ctx context.Context, o *planOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.out.resolve(stderr); err != nil {
		return err
	}
	if err := o.objects.resolve(o.out.format, o.out.file); err != nil {
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
	if ok, err := o.objects.write(stdout, o.out.format, o.out.file, func() []manifest.Doc { return manifest.FromPlan(p) }, "Nothing to plan."); ok {
		return err
	}
	var buf bytes.Buffer
	if err := plan.Write(&buf, p, o.out.format); err != nil {
		return err
	}
	return writeOutput(stdout, o.out.file, buf.Bytes())
}
