// Package outputflag is the output flags of gpulens's commands, as
// kubectl has them: -o/--output names the format (-o json, -o yaml) and
// --output-file the file, written atomically.
package outputflag

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Flags are kubectl's output habits: -o/--output names the format and
// --output-file the file. Before, -o was the file and --format the
// format; --format stays as a deprecated alias, and a -o whose value is
// no format but a path (week.html, ./out/plan) is still read as the file,
// with a warning, so scripts written for either keep working.
type Flags struct {
	// Format and File are what Resolve makes of the flags.
	Format, File string

	formats []string
	def     string
	// output is -o's value, legacy --format's.
	output, legacy string
}

// Error is a mistake in the output flags; its message names the flag.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func errorf(format string, args ...any) error { return &Error{fmt.Errorf(format, args...)} }

// Register adds -o/--output, the deprecated --format and --output-file
// to f, for a command that writes formats, def by default.
func (o *Flags) Register(f *pflag.FlagSet, formats []string, def string) {
	o.formats, o.def = formats, def
	f.StringVarP(&o.output, "output", "o", "", "Output format: "+strings.Join(formats, ", ")+" (default \""+def+"\")")
	f.StringVar(&o.legacy, "format", "", "Output format")
	_ = f.MarkDeprecated("format", "use -o/--output FORMAT, as kubectl does")
	f.StringVar(&o.File, "output-file", "", "Write to this file (atomically) instead of standard output")
}

// Resolve sets Format and File from the flags, before any work is done,
// warning on stderr of a deprecated spelling; mistakes are *Error.
func (o *Flags) Resolve(stderr io.Writer) error {
	o.Format = cmp.Or(o.legacy, o.def)
	legacySet := o.legacy != ""
	switch v := o.output; {
	case v == "":
	case slices.Contains(o.formats, v):
		if legacySet && o.legacy != v {
			return errorf("-o %s and --format %s disagree: give one (--format is deprecated)", v, o.legacy)
		}
		o.Format = v
	case legacySet || strings.ContainsAny(v, "./\\"):
		// The old meaning: -o was the file.
		if o.File != "" {
			return errorf("-o %s is not a format (want %s), and --output-file is already given", v, strings.Join(o.formats, ", "))
		}
		fmt.Fprintf(stderr, "Warning: -o %s as a file is deprecated: -o takes the format, as kubectl's; use --output-file %s\n", v, v)
		o.File = v
	default:
		return errorf("-o: unknown output format %q (want %s; to write to a file, --output-file FILE)", v, strings.Join(o.formats, ", "))
	}
	if !slices.Contains(o.formats, o.Format) {
		return errorf("-o: unknown output format %q (want %s)", o.Format, strings.Join(o.formats, ", "))
	}
	return nil
}

// Write writes a command's output to path (atomically: a reader never
// sees half of it) or, without one, to stdout.
func Write(stdout io.Writer, path string, b []byte) error {
	if path != "" {
		return WriteFile(path, b)
	}
	_, err := stdout.Write(b)
	return err
}
