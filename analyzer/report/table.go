package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// writeTable prints the report for a terminal.
func writeTable(w io.Writer, r *Report) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%s\n%s\n", strings.ToUpper(r.title()), r.headline())
	for _, s := range r.sections() {
		fmt.Fprintf(ew, "\n%s\n", strings.ToUpper(s.Title))
		if s.Intro != "" {
			fmt.Fprintln(ew, s.Intro)
		}
		if len(s.Rows) == 0 {
			fmt.Fprintln(ew, s.Empty)
			continue
		}
		tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, strings.ToUpper(strings.Join(s.Header, "\t")))
		for _, row := range s.Rows {
			fmt.Fprintln(tw, strings.Join(row, "\t"))
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
