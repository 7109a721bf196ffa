package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/quota"
)

type quotaOptions struct {
	src    sourceFlags
	format string
	output string
	now    func() time.Time
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
  gpulens quota --prometheus-url http://prometheus:9090 --format yaml -o quotas.yaml`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runQuota(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	f.StringVar(&o.format, "format", "table", "Output format: "+strings.Join(quota.Formats, ", "))
	f.StringVarP(&o.output, "output", "o", "", "Write to this file (atomically) instead of standard output")
	return c
}

func runQuota(ctx context.Context, o *quotaOptions, stdout, stderr io.Writer) error {
	if err := checkFormat(o.format, quota.Formats); err != nil {
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
	var buf bytes.Buffer
	if err := quota.Write(&buf, advice, notes, o.format); err != nil {
		return err
	}
	return writeOutput(stdout, o.output, buf.Bytes())
}
