package report

import (
	"encoding/json"
	"io"
)

// writeJSON prints the whole Report; it is the machine-readable format and
// has everything, including every finding.
func writeJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
