package openmetrics

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb"
)

func TestWriteFamiliesCountersEscapingAndStaleness(t *testing.T) {
	db, err := tsdb.Open(t.TempDir(), nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	app := db.Appender(context.Background())
	add := func(lset labels.Labels, ts int64, v float64) {
		if _, err := app.Append(0, lset, ts, v); err != nil {
			t.Fatal(err)
		}
	}
	energy := labels.FromStrings("__name__", "gpulens_gpu_energy_joules_total", "uuid", "GPU-1")
	up := labels.FromStrings("__name__", "gpulens_gpu_up", "uuid", "GPU-1", "model", `NVIDIA "H100"\x`)
	other := labels.FromStrings("__name__", "go_goroutines")
	add(energy, 60_000, 10)
	add(energy, 120_000, 20.5)
	add(up, 60_000, 1)
	add(up, 120_000, math.Float64frombits(value.StaleNaN))
	add(other, 60_000, 7)
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	q, err := db.Querier(0, 200_000)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	var buf bytes.Buffer
	n, err := Write(context.Background(), &buf, q, "gpulens_.+")
	if err != nil {
		t.Fatal(err)
	}
	want := `# TYPE gpulens_gpu_energy_joules counter
gpulens_gpu_energy_joules_total{uuid="GPU-1"} 10 60
gpulens_gpu_energy_joules_total{uuid="GPU-1"} 20.5 120
# TYPE gpulens_gpu_up gauge
gpulens_gpu_up{model="NVIDIA \"H100\"\\x",uuid="GPU-1"} 1 60
# EOF
`
	if buf.String() != want || n != 3 {
		t.Fatalf("wrote %d samples:\n%s\nwant:\n%s", n, buf.String(), want)
	}
	// The output must be valid OpenMetrics, as promtool's backfill parses it.
	p, err := textparse.New(buf.Bytes(), "application/openmetrics-text", nil, textparse.ParserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := p.Next(); err != nil {
			if strings.Contains(err.Error(), "EOF") {
				break
			}
			t.Fatalf("not valid OpenMetrics: %v", err)
		}
	}
}
