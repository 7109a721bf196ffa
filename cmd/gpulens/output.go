package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gpulens/gpulens/analyzer/report"
)

// outputFlags are kubectl's output habits: -o/--output names the format
// (-o json, -o yaml) and --output-file the file. Before, -o was the file
// and --format the format; --format stays as a deprecated alias, and a
// -o whose value is no format but a path (week.html, ./out/plan) is still
// read as the file, with a warning, so scripts written for either keep
// working.
type outputFlags struct {
	formats []string
	def     string
	// output is -o's value, legacy --format's, file --output-file's;
	// resolve turns them into format and file.
	output, legacy, file string
	format               string
}

func (o *outputFlags) register(f *pflag.FlagSet, formats []string, def string) {
	o.formats, o.def = formats, def
	f.StringVarP(&o.output, "output", "o", "", "Output format: "+strings.Join(formats, ", ")+" (default \""+def+"\")")
	f.StringVar(&o.legacy, "format", "", "Output format")
	_ = f.MarkDeprecated("format", "use -o/--output FORMAT, as kubectl does")
	f.StringVar(&o.file, "output-file", "", "Write to this file (atomically) instead of standard output")
}

// resolve sets format and file from the flags, before any work is done.
func (o *outputFlags) resolve(stderr io.Writer) error {
	o.format = cmp.Or(o.legacy, o.def)
	legacySet := o.legacy != ""
	switch v := o.output; {
	case v == "":
	case slices.Contains(o.formats, v):
		if legacySet && o.legacy != v {
			return usageError{fmt.Errorf("-o %s and --format %s disagree: give one (--format is deprecated)", v, o.legacy)}
		}
		o.format = v
	case legacySet || strings.ContainsAny(v, "./\\"):
		// The old meaning: -o was the file.
		if o.file != "" {
			return usageError{fmt.Errorf("-o %s is not a format (want %s), and --output-file is already given", v, strings.Join(o.formats, ", "))}
		}
		fmt.Fprintf(stderr, "Warning: -o %s as a file is deprecated: -o takes the format, as kubectl's; use --output-file %s\n", v, v)
		o.file = v
	default:
		return usageError{fmt.Errorf("-o: unknown output format %q (want %s; to write to a file, --output-file FILE)", v, strings.Join(o.formats, ", "))}
	}
	return checkFormat(o.format, o.formats)
}

// checkFormat refuses a format the command does not write, before any
// work is done.
func checkFormat(format string, formats []string) error {
	if !slices.Contains(formats, format) {
		return usageError{fmt.Errorf("-o: unknown output format %q (want %s)", format, strings.Join(formats, ", "))}
	}
	return nil
}

// writeOutput writes a command's output to path (atomically: a reader
// never sees half of it) or, without one, to stdout.
func writeOutput(stdout io.Writer, path string, b []byte) error {
	if path != "" {
		return report.WriteFile(path, b)
	}
	_, err := stdout.Write(b)
	return err
}
