package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/prometheus/common/version"
	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/demo"
	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/dashboards"
	"github.com/gpulens/gpulens/internal/cpuprofile"
	"github.com/gpulens/gpulens/internal/flagrange"
	"github.com/gpulens/gpulens/internal/outputflag"
)

// Exit codes are distinct so scripts can tell a usage mistake from a data
// problem from a failing backend.
const (
	exitOK      = 0
	exitFailure = 1
	// exitUsage: a flag, argument or input file is wrong (a malformed
	// duration, an unknown format, a scenario with mistakes).
	exitUsage = 2
	// exitUnreachable: the metrics source cannot be queried.
	exitUnreachable = 3
	// exitNoData: the window holds no GPU series of the schema.
	exitNoData = 4
	// exitData: the data directory is not a TSDB, or is unusable.
	exitData = 5
	// exitNoCluster: the command's answer is in the API server (quota),
	// and no cluster could be read.
	exitNoCluster = 6
)

// exitCodes are the exit codes of a session's failures.
var exitCodes = map[session.Failure]int{session.Unreachable: exitUnreachable,
	session.NoData: exitNoData, session.BadData: exitData, session.NoCluster: exitNoCluster}

// usageError marks errors in flags or arguments.
type usageError struct{ error }

// isUsage: a usageError, or a package's error that names a flag.
func isUsage(err error) bool {
	var (
		ue usageError
		oe *outputflag.Error
		me *manifest.OutputError
		re *flagrange.Error
		de *demo.FlagError
		we *report.WebhookURLError
		ie *dashboards.InputError
	)
	return errors.As(err, &ue) || errors.As(err, &oe) || errors.As(err, &me) || errors.As(err, &re) || errors.As(err, &de) || errors.As(err, &we) || errors.As(err, &ie)
}

// exitError carries the exit code of a failure.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }
func (e exitError) ExitCode() int { return e.code }

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:               "gpulens",
		Short:             "gpulens shows who uses the GPUs of a Kubernetes cluster, and what they should ask for instead",
		Long:              help("gpulens"),
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(c *cobra.Command, _ []string) error { return flagrange.Check(c.Flags(), flagRanges) },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	// --version, as kubectl's and Prometheus's binaries take it: the
	// same text as the version command.
	root.Version = version.Version
	root.SetVersionTemplate(version.Print("gpulens") + "\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w\nSee '%s --help'.", err, c.CommandPath())}
	})
	root.AddGroup(&cobra.Group{ID: "basic", Title: "Basic Commands:"},
		&cobra.Group{ID: "other", Title: "Other Commands:"})
	for _, c := range []*cobra.Command{newDemoCmd(), newReportCmd(), newRecommendCmd(), newPlanCmd(), newQuotaCmd(), newServeCmd(), newReclaimCmd(), newDashboardsCmd(), newVersionCmd()} {
		root.AddCommand(c)
		// pflag writes a deprecated flag's warning to its own output,
		// os.Stderr unless told: the command's stderr, like its errors.
		c.Flags().SetOutput(stderr)
	}
	root.SetHelpCommandGroupID("other")
	root.SetCompletionCommandGroupID("other")
	return root
}

func execute(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	stop := cpuprofile.Start(os.Getenv, stderr)
	err := root.Execute()
	stop()
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
		if isUsage(err) {
			return exitUsage
		}
		var ce interface{ ExitCode() int }
		if errors.As(err, &ce) {
			return ce.ExitCode()
		}
		return exitFailure
	}
	return exitOK
}
