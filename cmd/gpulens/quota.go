package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/quota"
	"github.com/gpulens/gpulens/analyzer/session"
)

type quotaOptions struct{ reading }

func newQuotaCmd() *cobra.Command {
	o := &quotaOptions{}
	return o.command("quota", "Advise each team's GPU quota (Kueue ClusterQueues, ResourceQuotas) from the GPUs it held",
		manifest.WithKustomize(quota.Formats), func(ctx context.Context, stdout, stderr io.Writer) error {
			return runQuota(ctx, o, stdout, stderr)
		})
}

func runQuota(ctx context.Context, o *quotaOptions, stdout, stderr io.Writer) error {
	s, err := o.open(ctx, stderr)
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
	return o.write(stdout, func() []manifest.Doc { return manifest.FromQuota(advice) }, "No changes: every GPU quota fits what was held.",
		func(w io.Writer, format string) error { return quota.Write(w, advice, notes, format) })
}
