package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/outputflag"
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
	s, err := o.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer s.Close()
	a, err := s.Analyze(ctx, 0)
	if err != nil {
		return o.src.exit(err)
	}
	sayDetected(stderr, a)
	l := report.List(a.Current, a.Findings, s.ClusterNotes(), report.ListOptions{All: o.all, Namespaces: o.namespaces, Selector: sel, Format: o.out.Format})
	for _, line := range l.Said {
		fmt.Fprintln(stderr, line)
	}
	if l.Empty != "" {
		return outputflag.Write(stdout, o.out.File, []byte(l.Empty))
	}
	return o.write(stdout, func() []manifest.Doc { return manifest.FromFindings(l.Findings) }, "No changes: nothing to change.",
		func(w io.Writer, format string) error { return report.WriteRecommendations(w, l.Findings, format) })
}
