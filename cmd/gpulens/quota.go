package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/quota"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/internal/outputflag"
)

type quotaOptions struct {
	src       sourceFlags
	out       outputflag.Flags
	outputDir string
	now       func() time.Time
}

func newQuotaCmd() *cobra.Command {
	o := &quotaOptions{now: time.Now}
	c := &cobra.Command{
		Use:     "quota",
		GroupID: "basic",
		Short:   "Advise each team's GPU quota (Kueue ClusterQueues, ResourceQuotas) from the GPUs it held",
		Long:    help("quota"),
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
	o.out.Register(f, manifest.WithKustomize(quota.Formats), "table")
	registerOutputDir(f, &o.outputDir)
	return c
}

func runQuota(ctx context.Context, o *quotaOptions, stdout, stderr io.Writer) error {
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
	advice, notes, err := s.Quotas(ctx)
	if err != nil {
		return o.src.exit(err)
	}
	if slices.Contains(notes, session.QuotasFromStore) {
		fmt.Fprintf(stderr, "note: %s\n", session.QuotasFromStore)
	}
	if ok, err := manifest.WriteOutput(stdout, o.out.Format, o.out.File, o.outputDir, func() []manifest.Doc { return manifest.FromQuota(advice) }, "No changes: every GPU quota fits what was held."); ok {
		return err
	}
	var buf bytes.Buffer
	if err := quota.Write(&buf, advice, notes, o.out.Format); err != nil {
		return err
	}
	return outputflag.Write(stdout, o.out.File, buf.Bytes())
}
