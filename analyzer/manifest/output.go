package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/gpulens/gpulens/internal/outputflag"
	"github.com/gpulens/gpulens/internal/safetext"
)

// The formats this package writes for recommend, plan and quota: yaml, a
// stream of Kubernetes objects for 'kubectl apply --server-side -f', and
// kustomize, a directory for 'kubectl apply -k'.
const (
	FormatYAML      = "yaml"
	FormatKustomize = "kustomize"
)

// WithKustomize is formats with kustomize.
func WithKustomize(formats []string) []string {
	return append(slices.Clone(formats), FormatKustomize)
}

// OutputError is a mistake in the output flags; its message names the flag.
type OutputError struct{ Err error }

func (e *OutputError) Error() string { return e.Err.Error() }
func (e *OutputError) Unwrap() error { return e.Err }

// CheckOutput refuses a directory (--output-dir) without the kustomize
// format, or the format without a directory or with a file
// (--output-file), before any work is done.
func CheckOutput(format, file, dir string) error {
	switch {
	case format == FormatKustomize && dir == "":
		return &OutputError{errors.New("-o kustomize: give the directory to write with --output-dir DIR")}
	case format != FormatKustomize && dir != "":
		return &OutputError{fmt.Errorf("--output-dir: only -o kustomize writes a directory (the format is %s; --output-file FILE writes a file)", format)}
	case format == FormatKustomize && file != "":
		return &OutputError{errors.New("--output-file: -o kustomize writes the directory of --output-dir, not a file")}
	}
	return nil
}

// WriteOutput writes docs as format: the YAML stream to file or stdout,
// or the kustomize directory dir, saying on stdout what it wrote. False
// when format is none of these, for the command's own writer.
func WriteOutput(stdout io.Writer, format, file, dir string, docs func() []Doc, empty string) (bool, error) {
	switch format {
	case FormatYAML:
		var buf bytes.Buffer
		if err := Write(&buf, docs(), empty); err != nil {
			return true, err
		}
		return true, outputflag.Write(stdout, file, buf.Bytes())
	case FormatKustomize:
		files, err := WriteKustomize(dir, docs(), empty)
		if err != nil {
			return true, err
		}
		_, err = fmt.Fprintf(stdout, "Wrote %d files to %s: review them, then kubectl apply -k %s\n", len(files), dir, safetext.ShellArg(dir))
		return true, err
	}
	return false, nil
}
