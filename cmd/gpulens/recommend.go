package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/report"
)

type recommendOptions struct {
	src    sourceFlags
	format string
	output string
	all    bool
	now    func() time.Time
	out    manifestOutput
}

func newRecommendCmd() *cobra.Command {
	o := &recommendOptions{now: time.Now}
	c := &cobra.Command{
		Use:     "recommend",
		GroupID: "basic",
		Short:   "List findings and right-sizing recommendations with their monthly savings",
		Long: `List findings and right-sizing recommendations for a window, with the change to make.

Each recommendation is a ready change: the GPU resource request to set, as a strategic-merge
patch for the workload (kubectl patch --type strategic), and, where the change needs one, the
NVIDIA device plugin sharing config to roll out. Savings are
(current share − recommended share) × price per GPU-hour × 730 h a month.

Formats: table (the default) for people, json for scripts (every finding with kind, severity,
namespace, workload, pod, node, gpu_uuid, evidence, recommendation, monthly_savings_usd and
confidence), yaml for the changes alone as Kubernetes objects (apply them with
kubectl apply --server-side --force-conflicts -f), kustomize for the same as a directory
(-o kustomize --output-dir DIR: a kustomization.yaml, the objects to create and one patch per
workload with its target; kubectl apply -k DIR).

Exit codes: 2 bad flags or input files, 3 the metrics source cannot be queried,
4 no GPU series in the window, 5 the data directory is not a usable TSDB.`,
		Example: `  # What to change, from last week's data in Prometheus
  gpulens recommend --prometheus-url http://prometheus:9090 --since 7d

  # Every finding as JSON, from the TSDB 'gpulens demo --data-dir' kept
  gpulens recommend --data-dir ./demo-data --format json --all

  # The patches, ready to review and apply
  gpulens recommend --prometheus-url http://prometheus:9090 --format yaml > patches.yaml

  # The week's advice as one reviewable GitOps change
  gpulens recommend --prometheus-url http://prometheus:9090 -o kustomize --output-dir ./gpulens-advice`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runRecommend(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	f.StringVar(&o.format, "format", "table", "Output format: "+strings.Join(withKustomize(report.RecommendFormats), ", "))
	f.StringVarP(&o.output, "output", "o", "", "Write to this file (atomically) instead of standard output")
	o.out.register(f)
	f.BoolVar(&o.all, "all", false, "Also list info findings that carry no change and no savings (table and json)")
	return c
}

func runRecommend(ctx context.Context, o *recommendOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.out.resolve(&o.format, &o.output); err != nil {
		return err
	}
	if err := checkFormat(o.format, withKustomize(report.RecommendFormats)); err != nil {
		return err
	}
	a, err := o.src.analyze(ctx, o.now(), stderr)
	if err != nil {
		return err
	}
	for _, s := range a.Findings.Skipped {
		fmt.Fprintf(stderr, "skipped: %s\n", s)
	}
	fs := report.SelectFindings(a.Findings.Findings, o.all)
	if ok, err := o.out.write(stdout, o.format, o.output, func() []manifest.Doc { return manifest.FromFindings(fs) }, "No changes: nothing to change."); ok {
		return err
	}
	var buf bytes.Buffer
	if err := report.WriteRecommendations(&buf, fs, o.format); err != nil {
		return err
	}
	return writeOutput(stdout, o.output, buf.Bytes())
}
