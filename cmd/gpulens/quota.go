package main

import (
	"bytes"
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/quota"
)

type quotaOptions struct {
	src     sourceFlags
	out     outputFlags
	objects manifestOutput
	now     func() time.Time
}

func newQuotaCmd() *cobra.Command {
	o := &quotaOptions{now: time.Now}
	c := &cobra.Command{
		Use:     "quota",
		GroupID: "basic",
		Short:   "Advise each team's GPU quota (Kueue ClusterQueues, ResourceQuotas) from the GPUs it held",
		Long: `Advise each team's GPU quota from the GPUs its namespaces held at once, at every step of the window.

Where Kueue is installed, every GPU resource of every ClusterQueue is compared, per flavor, with
the GPUs that the namespaces of its LocalQueues held at once (a flavor counts the GPUs of the model
its nvidia.com/gpu.product node label names). Every namespace's requests.nvidia.com/gpu
ResourceQuota is compared with what the namespace held. The advised quota covers the p95 with a
margin (quota.margin of --config, 20% by default); a ClusterQueue in a cohort gets a borrowing
limit for the rest of its peak. A time-sliced replica counts as one nvidia.com/gpu, as the device
plugin advertises it without renameByDefault; a MIG slice counts as one of its own resource.

A store shared by several clusters (series carrying the --cluster-label label) is advised cluster
by cluster: each cluster's quotas, read through its own context (--context CONTEXT=CLUSTER), with
what its own namespaces held; each quota names its cluster, and a cluster that could not be read
is said in the notes.

Formats (-o): table, json, yaml (each change as a patch: a JSON patch for a ClusterQueue,
a merge patch for a ResourceQuota, with the kubectl command that applies it).

Needs cluster access: the quotas are read from the API server.

Exit codes: 2 bad flags or input files, 3 the metrics source cannot be queried,
4 no GPU series in the window, 5 the data directory is not a usable TSDB, 6 no cluster
could be read (so no quota is known; with several clusters, only when none could).`,
		Example: `  # Last week's quota advice, from Prometheus and the current kubeconfig context
  gpulens quota --prometheus-url http://prometheus:9090 --since 7d

  # The patches, ready to review and apply
  gpulens quota --prometheus-url http://prometheus:9090 -o yaml --output-file quotas.yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runQuota(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	o.out.register(f, withKustomize(quota.Formats), "table")
	o.objects.register(f)
	return c
}

func runQuota(ctx context.Context, o *quotaOptions, stdout, stderr io.Writer) error {
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
	advice, notes, err := s.Quotas(ctx)
	if err != nil {
		return o.src.exit(err)
	}
	if ok, err := o.objects.write(stdout, o.out.format, o.out.file, func() []manifest.Doc { return manifest.FromQuota(advice) }, "No changes: every GPU quota fits what was held."); ok {
		return err
	}
	var buf bytes.Buffer
	if err := quota.Write(&buf, advice, notes, o.out.format); err != nil {
		return err
	}
	return writeOutput(stdout, o.out.file, buf.Bytes())
}
