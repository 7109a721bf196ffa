package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gpulens/gpulens/internal/safetext"
)

// writeTable prints the report for a terminal. Its cells and lines hold
// label values, so each goes through safetext (Cell, Line): no control
// character reaches the terminal and a row stays one row.
func writeTable(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%s\n%s\n", strings.ToUpper(r.title()), safetext.Line(r.subtitle()))
	for _, s := range append([]section{r.headlineSection()}, r.sections()...) {
		fmt.Fprintf(ew, "\n%s\n", strings.ToUpper(s.Title))
		if s.Intro != "" {
			fmt.Fprintln(ew, safetext.Line(s.Intro))
		}
		if len(s.Rows) == 0 {
			fmt.Fprintln(ew, safetext.Line(s.Empty))
			continue
		}
		tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(s.Header, "\t")))
		for _, row := range s.Rows {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = safetext.Cell(c)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
		_ = tw.Flush() // its errors are ew's, reported below
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
