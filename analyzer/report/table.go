package report

import (
	"io"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/internal/termtable"
)

// writeTable prints the report for a terminal, within 120 columns
// (termtable.Width): the long columns are -o wide's, prose is wrapped.
func writeTable(w io.Writer, r *Report) error { return writeText(w, r, false) }

// writeWide is -o wide: every column, and every line whole, as kubectl's.
func writeWide(w io.Writer, r *Report) error { return writeText(w, r, true) }

// writeText prints the report's sections. Cells and lines hold label
// values: termtable escapes each (safetext.Cell, Line) before it wraps or
// cuts it, so no control character reaches the terminal and a value
// never starts a line of its own.
func writeText(w io.Writer, r *Report, wide bool) error {
	ew := &errWriter{w: w}
	io.WriteString(ew, strings.ToUpper(r.title())+"\n")
	_ = termtable.Prose(ew, "", "  ", r.subtitle(), wide)
	for _, s := range append([]section{r.headlineSection()}, r.sections()...) {
		io.WriteString(ew, "\n"+strings.ToUpper(s.Title)+"\n")
		if s.Intro != "" {
			_ = termtable.Prose(ew, "", "  ", s.Intro, wide)
		}
		if len(s.Rows) == 0 {
			_ = termtable.Prose(ew, "", "  ", s.Empty, wide)
			continue
		}
		tb := termtable.New()
		below := -1
		for i, h := range s.Header {
			if h == s.Below && !wide {
				below = i
			}
			tb.Columns = append(tb.Columns, termtable.Column{Name: h, Wide: slices.Contains(s.Wide, h) || i == below, Wrap: slices.Contains(s.Wrap, h)})
		}
		for _, row := range s.Rows {
			tb.Row(row...)
		}
		_ = tb.Write(ew, wide) // its errors are ew's, reported below
		if below >= 0 {
			io.WriteString(ew, "\n")
			for _, row := range s.Rows {
				prefix := row[0] + ". "
				_ = termtable.Prose(ew, prefix, strings.Repeat(" ", len(prefix)), row[below], wide)
			}
		}
	}
	return ew.err
}

// errWriter keeps the first write error so a renderer can print freely and
// check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
