package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/internal/humanlog"
	"github.com/gpulens/gpulens/internal/outputflag"
	"github.com/gpulens/gpulens/internal/progress"
)

// reading is what every command that reads metrics and writes one answer
// (report, recommend, plan, quota) shares: the source flags, -o and
// --output-file, --output-dir where -o kustomize is one of its formats,
// and the clock. One preamble, so that a new command cannot open the
// session before checking its output flags, or forget an exit code.
type reading struct {
	src       sourceFlags
	out       outputflag.Flags
	outputDir string
	now       func() time.Time
}

// command is the basic command name whose help and examples are
// help/NAME.txt and help/NAME.examples.txt, with the reading flags and
// formats; run is given the command's context and streams.
func (r *reading) command(name, short string, formats []string, run func(ctx context.Context, stdout, stderr io.Writer) error) *cobra.Command {
	r.now = time.Now
	c := &cobra.Command{
		Use:     name,
		GroupID: "basic",
		Short:   short,
		Long:    help(name),
		Example: examples(name),
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return run(c.Context(), c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	f := c.Flags()
	r.src.register(f)
	r.out.Register(f, formats, "table")
	if slices.Contains(formats, manifest.FormatKustomize) {
		registerOutputDir(f, &r.outputDir)
	}
	return c
}

// open checks the output flags, before an analysis that may take
// minutes, then opens the session the source flags name: its warnings one
// readable line each on stderr (serve, a daemon, logs logfmt), with a
// progress line where stderr is a terminal.
func (r *reading) open(ctx context.Context, stderr io.Writer) (*session.Session, error) {
	if err := r.checkOutput(stderr); err != nil {
		return nil, err
	}
	return r.src.open(ctx, r.now(), slog.New(humanlog.New(stderr, slog.LevelWarn)), progress.NewLine(stderr, r.src.quiet))
}

// sayDetected says which schema was detected, when it was.
func sayDetected(w io.Writer, a *pipeline.Analysis) {
	if a.Detected {
		fmt.Fprintf(w, "Using the %s schema (detected).\n", a.Schema.Name())
	}
}

// checkOutput checks -o, --output-file and --output-dir, before any analysis.
func (r *reading) checkOutput(stderr io.Writer) error {
	if err := r.out.Resolve(stderr); err != nil {
		return err
	}
	return manifest.CheckOutput(r.out.Format, r.out.File, r.outputDir)
}

// write writes the answer: the manifests docs returns for -o yaml and
// -o kustomize (none says why there are none), else what render writes
// in the format, to --output-file or stdout.
func (r *reading) write(stdout io.Writer, docs func() []manifest.Doc, none string, render func(w io.Writer, format string) error) error {
	if docs != nil {
		if ok, err := manifest.WriteOutput(stdout, r.out.Format, r.out.File, r.outputDir, docs, none); ok {
			return err
		}
	}
	var buf bytes.Buffer
	if err := render(&buf, r.out.Format); err != nil {
		return err
	}
	return outputflag.Write(stdout, r.out.File, buf.Bytes())
}
