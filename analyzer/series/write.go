package series

import (
	"bufio"
	"bytes"
	"io"
	"strings"

	"github.com/VictoriaMetrics/metrics"
)

var families = func() map[string]Family {
	m := make(map[string]Family, len(Families))
	for _, f := range Families {
		m[f.Name] = f
	}
	return m
}()

// Write writes the sets in the text exposition format with HELP and TYPE
// before each family. The sets must hold different families: the format
// wants each family in one block. Families missing from the table get no
// metadata (a test makes sure there are none).
func Write(w io.Writer, sets ...*metrics.Set) error {
	var buf bytes.Buffer
	for _, s := range sets {
		if s != nil {
			s.WritePrometheus(&buf)
		}
	}
	bw := bufio.NewWriter(w)
	prev := ""
	for line := range strings.Lines(buf.String()) {
		fam := line
		if i := strings.IndexAny(line, "{ "); i >= 0 {
			fam = line[:i]
		}
		if fam != prev {
			if f, ok := families[fam]; ok {
				bw.WriteString("# HELP " + f.Name + " " + f.Help + "\n# TYPE " + f.Name + " " + f.Type + "\n")
			}
			prev = fam
		}
		bw.WriteString(line)
	}
	return bw.Flush()
}
