package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/outputflag"
	"github.com/gpulens/gpulens/internal/safetext"
)

type recommendOptions struct {
	src        sourceFlags
	out        outputflag.Flags
	all        bool
	namespaces []string
	selector   string
	outputDir  string
	now        func() time.Time
}

func newRecommendCmd() *cobra.Command {
	o := &recommendOptions{now: time.Now}
	c := &cobra.Command{
		Use:     "recommend",
		GroupID: "basic",
		Short:   "List findings and right-sizing recommendations with their monthly savings",
		Long:    help("recommend"),
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
	o.out.Register(f, manifest.WithKustomize(report.RecommendFormats), "table")
	registerOutputDir(f, &o.outputDir)
	f.StringSliceVarP(&o.namespaces, "namespace", "n", nil, "Only these namespaces' findings (repeatable or comma-separated; a node's or the fleet's finding is in none)")
	f.StringVarP(&o.selector, "selector", "l", "", "Only the findings whose labels match this selector, as kubectl's (kind=idle-allocation,severity!=info; labels: kind, severity, namespace, workload, workload_kind, pod, node, gpu_uuid, model, team, cluster, allocation_path, sharing)")
	f.BoolVar(&o.all, "all", false, "Also list info findings that carry no change and no savings (table and json)")
	return c
}

func runRecommend(ctx context.Context, o *recommendOptions, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.out.Resolve(stderr); err != nil {
		return err
	}
	if err := manifest.CheckOutput(o.out.Format, o.out.File, o.outputDir); err != nil {
		return err
	}
	sel, err := labels.Parse(o.selector)
	if err != nil {
		return usageError{fmt.Errorf("-l/--selector: %w", err)}
	}
	if err := report.CheckSelector(sel); err != nil {
		return usageError{fmt.Errorf("-l/--selector: %w", err)}
	}
	a, err := o.src.analyze(ctx, o.now(), stderr)
	if err != nil {
		return err
	}
	for _, s := range a.Findings.Skipped {
		fmt.Fprintf(stderr, "skipped: %s\n", safetext.Line(s)) // it names workloads: store text
	}
	fs := slices.DeleteFunc(report.SelectFindings(a.Findings.Findings, o.all, o.namespaces...),
		func(f findings.Finding) bool { return !sel.Matches(labels.Set(report.FindingLabels(f))) })
	if len(fs) == 0 {
		if why := report.ExplainNoMatch(a.Findings.Findings, namespacesOf(a), o.namespaces, sel); why != "" {
			if o.out.Format == "table" {
				// The table's own empty message ("every workload is sized
				// to its use") would be false here: the filter, not the
				// fleet, left nothing.
				return outputflag.Write(stdout, o.out.File, []byte("No findings: "+why+".\n"))
			}
			fmt.Fprintf(stderr, "note: %s\n", why)
		}
	}
	if ok, err := manifest.WriteOutput(stdout, o.out.Format, o.out.File, o.outputDir, func() []manifest.Doc { return manifest.FromFindings(fs) }, "No changes: nothing to change."); ok {
		return err
	}
	var buf bytes.Buffer
	if err := report.WriteRecommendations(&buf, fs, o.out.Format); err != nil {
		return err
	}
	return outputflag.Write(stdout, o.out.File, buf.Bytes())
}

// namespacesOf are the namespaces the window's allocations name: a
// namespace whose pods held GPUs is in the data even when it has no
// finding.
func namespacesOf(a *pipeline.Analysis) []string {
	var out []string
	if a.Current != nil {
		for _, al := range a.Current.Allocations {
			if al.Namespace != "" && !slices.Contains(out, al.Namespace) {
				out = append(out, al.Namespace)
			}
		}
	}
	return out
}
