package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/pflag"

	"github.com/gpulens/gpulens/analyzer/manifest"
)

// The formats analyzer/manifest writes for recommend, plan and quota:
// yaml, a stream of Kubernetes objects for 'kubectl apply --server-side
// -f', and kustomize, a directory for 'kubectl apply -k'.
const (
	formatYAML      = "yaml"
	formatKustomize = "kustomize"
)

// manifestOutput is the flags of the commands whose advice is objects.
type manifestOutput struct {
	dir string
}

func (m *manifestOutput) register(f *pflag.FlagSet) {
	f.StringVar(&m.dir, "output-dir", "", "With -o kustomize: the directory to write kustomization.yaml, resources/ and patches/ into")
}

// withKustomize is formats with kustomize.
func withKustomize(formats []string) []string {
	return append(slices.Clone(formats), formatKustomize)
}

// resolve refuses a directory without the kustomize format, or the
// format without a directory, before any work is done.
func (m *manifestOutput) resolve(format, file string) error {
	switch {
	case format == formatKustomize && m.dir == "":
		return usageError{errors.New("-o kustomize: give the directory to write with --output-dir DIR")}
	case format != formatKustomize && m.dir != "":
		return usageError{fmt.Errorf("--output-dir: only -o kustomize writes a directory (the format is %s; --output-file FILE writes a file)", format)}
	case format == formatKustomize && file != "":
		return usageError{errors.New("--output-file: -o kustomize writes the directory of --output-dir, not a file")}
	}
	return nil
}

// write writes docs as format: the YAML stream to file or stdout, or the
// kustomize directory, saying on stdout what it wrote. False when format
// is none of these, for the command's own writer.
func (m *manifestOutput) write(stdout io.Writer, format, file string, docs func() []manifest.Doc, empty string) (bool, error) {
	switch format {
	case formatYAML:
		var buf bytes.Buffer
		if err := manifest.Write(&buf, docs(), empty); err != nil {
			return true, err
		}
		return true, writeOutput(stdout, file, buf.Bytes())
	case formatKustomize:
		files, err := manifest.WriteKustomize(m.dir, docs(), empty)
		if err != nil {
			return true, err
		}
		_, err = fmt.Fprintf(stdout, "Wrote %d files to %s: review them, then kubectl apply -k %s\n", len(files), m.dir, m.dir)
		return true, err
	}
	return false, nil
}
