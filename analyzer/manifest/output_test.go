package manifest

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckOutput: -o kustomize takes a directory and no file; a directory
// without it is refused; each mistake is an *OutputError naming the flag.
func TestCheckOutput(t *testing.T) {
	for _, c := range []struct {
		format, file, dir string
		err               string
	}{
		{format: "table"},
		{format: FormatYAML, file: "p.yaml"},
		{format: FormatKustomize, dir: "out"},
		{format: FormatKustomize, err: "-o kustomize: give the directory to write with --output-dir DIR"},
		{format: "json", dir: "out", err: "--output-dir: only -o kustomize writes a directory (the format is json; --output-file FILE writes a file)"},
		{format: FormatKustomize, file: "p.yaml", dir: "out", err: "--output-file: -o kustomize writes the directory of --output-dir, not a file"},
	} {
		err := CheckOutput(c.format, c.file, c.dir)
		var oe *OutputError
		if c.err == "" && err != nil || c.err != "" && (!errors.As(err, &oe) || err.Error() != c.err) {
			t.Errorf("CheckOutput(%q, %q, %q) = %v, want %q", c.format, c.file, c.dir, err, c.err)
		}
	}
}

// TestWriteOutput: yaml is the stream, to the file or stdout; kustomize the
// directory, said on stdout; any other format is left to the command.
func TestWriteOutput(t *testing.T) {
	docs := func() []Doc { return nil }
	dir := t.TempDir()
	for _, c := range []struct {
		format, file, dir string
		handled           bool
		stdout            string
	}{
		{format: "table"},
		{format: FormatYAML, handled: true, stdout: "Nothing."},
		{format: FormatYAML, file: filepath.Join(dir, "p.yaml"), handled: true},
		{format: FormatKustomize, dir: filepath.Join(dir, "k"), handled: true, stdout: "then kubectl apply -k " + filepath.Join(dir, "k")},
	} {
		var out bytes.Buffer
		ok, err := WriteOutput(&out, c.format, c.file, c.dir, docs, "Nothing.")
		if err != nil || ok != c.handled || !strings.Contains(out.String(), c.stdout) || c.stdout == "" && out.Len() > 0 {
			t.Errorf("%s: handled %v err %v stdout %q, want %v and %q", c.format, ok, err, out.String(), c.handled, c.stdout)
		}
		if c.file != "" {
			if b, err := os.ReadFile(c.file); err != nil || !strings.Contains(string(b), "Nothing.") {
				t.Errorf("%s: file %q, %v", c.file, b, err)
			}
		}
	}
}
