package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/report"
)

// checkFormat refuses a --format the command does not write, before any
// work is done.
func checkFormat(format string, formats []string) error {
	if !slices.Contains(formats, format) {
		return usageError{fmt.Errorf("--format: unknown format %q (want %s)", format, strings.Join(formats, ", "))}
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
