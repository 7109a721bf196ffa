package report

import (
	"fmt"
	"io"
	"strings"
)

// Formats are the renderers, in the order --help lists them: wide is
// the table with every column whole, as kubectl's -o wide.
var Formats = []string{"table", "wide", "markdown", "html", "json", "yaml", "csv", "ledger-csv"}

var renderers = map[string]func(io.Writer, *Report) error{
	"table":      writeTable,
	"wide":       writeWide,
	"markdown":   writeMarkdown,
	"html":       writeHTML,
	"json":       writeJSON,
	"yaml":       writeYAML,
	"csv":        writeCSV,
	"ledger-csv": writeLedgerCSV,
}

// UnknownFormatError is returned by Render for a format it does not know.
type UnknownFormatError struct{ Format string }

func (e *UnknownFormatError) Error() string {
	return fmt.Sprintf("unknown format %q (want %s)", e.Format, strings.Join(Formats, ", "))
}

// Render writes r in format.
func Render(w io.Writer, r *Report, format string) error {
	f, ok := renderers[format]
	if !ok {
		return &UnknownFormatError{Format: format}
	}
	return f(w, r)
}
