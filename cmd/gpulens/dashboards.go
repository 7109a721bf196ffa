package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/dashboards"
	"github.com/gpulens/gpulens/vocab"
)

type dashboardsOptions struct {
	out, schema, clusterLabel string
}

func newDashboardsCmd() *cobra.Command {
	o := &dashboardsOptions{}
	c := &cobra.Command{
		Use:     "dashboards --output-dir DIR",
		GroupID: "basic",
		Short:   "Write the Grafana dashboards (fleet, node and GPU, team, workload, findings) as JSON",
		Long:    help("dashboards"),
		Example: examples("dashboards"),
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runDashboards(o, c.OutOrStdout())
		},
	}
	f := c.Flags()
	f.StringVar(&o.out, "output-dir", "", "Directory to write the dashboards to (created if missing)")
	// --out was this flag's name before every command's directory flag
	// was --output-dir; it stays, deprecated, so scripts keep working.
	f.StringVar(&o.out, "out", "", "Deprecated: use --output-dir")
	_ = f.MarkDeprecated("out", "use --output-dir, as every gpulens command names its output directory")
	f.StringVar(&o.schema, "schema", "native", "Metrics the dashboards chart: "+strings.Join(dashboards.Schemas(), ", "))
	f.StringVar(&o.clusterLabel, "cluster-label", vocab.DefaultClusterLabel, "Label that names each series' cluster, whose values the cluster variable lists (as the analyzer's --cluster-label)")
	return c
}

func runDashboards(o *dashboardsOptions, stdout io.Writer) error {
	if o.out == "" {
		return usageError{fmt.Errorf("--output-dir is required\nSee 'gpulens dashboards --help'.")}
	}
	paths, err := dashboards.Write(o.out, o.schema, o.clusterLabel)
	if err != nil {
		return err // a *dashboards.InputError names its flag: isUsage
	}
	slog.Debug("dashboards written", "dir", o.out, "schema", o.schema, "files", len(paths))
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	return nil
}
