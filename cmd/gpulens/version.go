package main

import (
	"fmt"

	"github.com/prometheus/common/version"
	"github.com/spf13/cobra"

	// Fills the version package from the build information.
	_ "github.com/gpulens/gpulens/internal/buildinfo"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version information",
		GroupID: "other",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			fmt.Fprintln(c.OutOrStdout(), version.Print("gpulens"))
			return nil
		},
	}
}
