// Package openmetrics writes stored samples as an OpenMetrics text file with
// timestamps: the input of `promtool tsdb create-blocks-from openmetrics`
// and of VictoriaMetrics' /api/v1/import/prometheus. It is how a simulated
// week reaches real Prometheus and VictoriaMetrics servers in tests.
package openmetrics

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// Write writes every series of q whose name matches nameRegexp. The
// querier returns series sorted by labels, and __name__ sorts first, so
// each metric family comes out contiguous, as OpenMetrics requires.
//
// Staleness markers have no OpenMetrics form and are left out; a consumer
// that needs series to end sharply must rely on its own lookback.
func Write(ctx context.Context, w io.Writer, q storage.Querier, nameRegexp string) (samples int, err error) {
	m, err := labels.NewMatcher(labels.MatchRegexp, labels.MetricName, nameRegexp)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	set := q.Select(ctx, true, nil, m)
	family := ""
	var it chunkenc.Iterator
	var line []byte
	for set.Next() {
		s := set.At()
		lset := s.Labels()
		name := lset.Get(labels.MetricName)
		if fam, typ := familyOf(name); fam != family {
			family = fam
			fmt.Fprintf(bw, "# TYPE %s %s\n", fam, typ)
		}
		prefix := seriesPrefix(lset, name)
		it = s.Iterator(it)
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			if vt != chunkenc.ValFloat {
				continue
			}
			t, v := it.At()
			if value.IsStaleNaN(v) {
				continue
			}
			line = append(line[:0], prefix...)
			line = append(line, ' ')
			line = appendFloat(line, v)
			line = append(line, ' ')
			// OpenMetrics timestamps are seconds.
			line = strconv.AppendFloat(line, float64(t)/1000, 'f', -1, 64)
			line = append(line, '\n')
			bw.Write(line)
			samples++
		}
		if err := it.Err(); err != nil {
			return samples, err
		}
	}
	if err := set.Err(); err != nil {
		return samples, err
	}
	bw.WriteString("# EOF\n")
	return samples, bw.Flush()
}

// familyOf follows OpenMetrics: a counter family is named without _total.
func familyOf(name string) (family, typ string) {
	if f, ok := strings.CutSuffix(name, "_total"); ok {
		return f, "counter"
	}
	return name, "gauge"
}

func seriesPrefix(lset labels.Labels, name string) []byte {
	var b strings.Builder
	b.WriteString(name)
	first := true
	lset.Range(func(l labels.Label) {
		if l.Name == labels.MetricName {
			return
		}
		if first {
			b.WriteByte('{')
			first = false
		} else {
			b.WriteByte(',')
		}
		b.WriteString(l.Name)
		b.WriteString(`="`)
		b.WriteString(escape(l.Value))
		b.WriteByte('"')
	})
	if !first {
		b.WriteByte('}')
	}
	return []byte(b.String())
}

var escaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

func escape(s string) string { return escaper.Replace(s) }

func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
