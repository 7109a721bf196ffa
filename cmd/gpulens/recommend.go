package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/outputflag"
	"github.com/gpulens/gpulens/internal/safetext"
)

type recommendOptions struct {
	reading
	all        bool
	namespaces []string
	selector   string
}

func newRecommendCmd() *cobra.Command {
	o := &recommendOptions{}
	c := o.command("recommend", "List findings and right-sizing recommendations with their monthly savings",
		manifest.WithKustomize(report.RecommendFormats), func(ctx context.Context, stdout, stderr io.Writer) error {
			return runRecommend(ctx, o, stdout, stderr)
		})
	f := c.Flags()
	f.StringSliceVarP(&o.namespaces, "namespace", "n", nil, "Only these namespaces' findings (repeatable or comma-separated; a node's or the fleet's finding is in none)")
	f.StringVarP(&o.selector, "selector", "l", "", "Only the findings whose labels match this selector, as kubectl's (kind=idle-allocation,severity!=info; labels: kind, severity, namespace, workload, workload_kind, pod, node, gpu_uuid, model, team, cluster, allocation_path, sharing)")
	f.BoolVar(&o.all, "all", false, "Also list info findings that carry no change and no savings (table and json)")
	return c
}

func runRecommend(ctx context.Context, o *recommendOptions, stdout, stderr io.Writer) error {
	sel, err := report.ParseSelector(o.selector)
	if err != nil {
		return usageError{fmt.Errorf("-l/--selector: %w", err)}
	}
	if err := o.checkOutput(stderr); err != nil {
		return err
	}
	a, err := o.src.analyze(ctx, o.now(), stderr)
	if err != nil {
		return err
	}
	for _, s := range a.Findings.Skipped {
		fmt.Fprintf(stderr, "skipped: %s\n", safetext.Line(s)) // it names workloads: store text
	}
	fs, why := report.Filter(a.Current, a.Findings.Findings, o.all, o.namespaces, sel)
	if why != "" && o.out.Format == "table" {
		// The table's own empty message ("every workload is sized to its
		// use") would be false here: the filter, not the fleet, left nothing.
		return outputflag.Write(stdout, o.out.File, []byte("No findings: "+why+".\n"))
	} else if why != "" {
		fmt.Fprintf(stderr, "note: %s\n", why)
	}
	return o.write(stdout, func() []manifest.Doc { return manifest.FromFindings(fs) }, "No changes: nothing to change.",
		func(w io.Writer, format string) error { return report.WriteRecommendations(w, fs, format) })
}
