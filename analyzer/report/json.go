package report

import (
	"io"
)

// writeJSON prints the whole Report; it is the machine-readable format and
// has everything, including every finding. A money figure is a number
// only where it is known (reportJSON).
func writeJSON(w io.Writer, r *Report) error {
	b, err := reportJSON(r)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
