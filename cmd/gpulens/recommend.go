package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/report"
)

type recommendOptions struct {
	src        sourceFlags
	out        outputFlags
	all        bool
	namespaces []string
	objects    manifestOutput
	now        func() time.Time
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
workload with its target; kubectl apply -k DIR), csv for spreadsheets
(one row per finding; text cells that a spreadsheet would run as formulas are written as text).
-n/--namespace keeps one or more namespaces' findings, as kubectl's does.

Exit codes: 2 bad flags or input files, 3 the metrics source cannot be queried,
4 no GPU series in the window, 5 the data directory is not a usable TSDB.`,
		Example: `  # What to change, from last week's data in Prometheus
  gpulens recommend --prometheus-url http://prometheus:9090 --since 7d

  # Every finding as JSON, from the TSDB 'gpulens demo --data-dir' kept
  gpulens recommend --data-dir ./demo-data -o json --all

  # One team's findings, for a spreadsheet
  gpulens recommend --data-dir ./demo-data -n team-vision -o csv --output-file vision.csv

  # The patches, ready to review and apply
  gpulens recommend --prometheus-url http://prometheus:9090 -o yaml > patches.yaml

  # The week's advice as one reviewable GitOps change
  gpulens recommend --prometheus-url http://prometheus:9090 -o kustomize --output-dir ./gpulens-advice`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runRecommend(c.Context(), o, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	o.src.register(f)
	o.out.register(f, withKustomize(report.RecommendFormats), "table")
	o.objects.register(f)
	f.StringSliceVarP(&o.namespaces, "namespace", "n", nil, "Only these namespaces' findings (repeatable or comma-separated; a node's or the fleet's finding is in none)")
	f.BoolVar(&o.all, "all", false, "Also list info findings that carry no change and no savings (table and json)")
	return c
}

func runRecommend(ctx context.Context, o *recommendOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.out.resolve(stderr); err != nil {
		return err
	}
	if err := o.objects.resolve(o.out.format, o.out.file); err != nil {
		return err
	}
	a, err := o.src.analyze(ctx, o.now(), stderr)
	if err != nil {
		return err
	}
	for _, s := range a.Findings.Skipped {
		fmt.Fprintf(stderr, "skipped: %s\n", s)
	}
	fs := report.SelectFindings(a.Findings.Findings, o.all, o.namespaces...)
	if ok, err := o.objects.write(stdout, o.out.format, o.out.file, func() []manifest.Doc { return manifest.FromFindings(fs) }, "No changes: nothing to change."); ok {
		return err
	}
	var buf bytes.Buffer
	if err := report.WriteRecommendations(&buf, fs, o.out.format); err != nil {
		return err
	}
	return writeOutput(stdout, o.out.file, buf.Bytes())
}
