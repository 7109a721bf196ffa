package outputflag

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestOutputFlags: -o takes the format as kubectl's does; --output-file
// the file; the old spellings (--format FORMAT, -o FILE) still work, with
// a warning, so no script breaks silently — and none writes a table into
// a file named "json" any more, which -o json used to do.
func TestOutputFlags(t *testing.T) {
	formats := []string{"table", "json", "yaml", "html"}
	for _, c := range []struct {
		name               string
		args               []string
		format, file, warn string
		err                string
	}{
		{name: "default", format: "table"},
		{name: "kubectl -o", args: []string{"-o", "json"}, format: "json"},
		{name: "long --output", args: []string{"--output=yaml"}, format: "yaml"},
		{name: "file", args: []string{"-o", "html", "--output-file", "week.html"}, format: "html", file: "week.html"},
		{name: "legacy --format", args: []string{"--format", "json"}, format: "json", warn: "deprecated"},
		{name: "legacy -o FILE", args: []string{"--format", "html", "-o", "week.html"}, format: "html", file: "week.html", warn: "--output-file week.html"},
		{name: "legacy -o path alone", args: []string{"-o", "./out/report"}, format: "table", file: "./out/report", warn: "--output-file ./out/report"},
		{name: "legacy -o bare name with --format", args: []string{"--format", "json", "-o", "report"}, format: "json", file: "report", warn: "deprecated"},
		{name: "unknown format", args: []string{"-o", "xml"}, err: `-o: unknown output format "xml" (want table, json, yaml, html; to write to a file, --output-file FILE)`},
		{name: "unknown legacy format", args: []string{"--format", "pdf"}, err: `unknown output format "pdf"`},
		{name: "disagree", args: []string{"-o", "json", "--format", "yaml"}, err: "disagree"},
		{name: "two files", args: []string{"--format", "json", "-o", "a.json", "--output-file", "b.json"}, err: "--output-file is already given"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var o Flags
			var stderr bytes.Buffer
			cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return o.Resolve(&stderr) }, SilenceUsage: true, SilenceErrors: true}
			cmd.SetErr(&stderr)
			cmd.Flags().SetOutput(&stderr)
			o.Register(cmd.Flags(), formats, "table")
			cmd.SetArgs(c.args)
			err := cmd.Execute()
			if c.err != "" {
				var oe *Error
				if !errors.As(err, &oe) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want an *Error containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Format != c.format || o.File != c.file {
				t.Errorf("format %q file %q, want %q %q", o.Format, o.File, c.format, c.file)
			}
			if (c.warn == "") != (stderr.Len() == 0) || !strings.Contains(stderr.String(), c.warn) {
				t.Errorf("stderr %q, want a warning containing %q", stderr.String(), c.warn)
			}
		})
	}
}
