package query

import (
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"

	"github.com/gpulens/gpulens/analyzer/source"
)

// t0 is the window start; minute i of the window is t0 + i minutes, and a
// 4h window holds minutes 1..240 (PromQL ranges are open on the left).
var t0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func minute(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }

type testFleet struct {
	t   *testing.T
	src *source.Embedded
	app storage.Appender
}

func newFleet(t testing.TB) *testFleet {
	t.Helper()
	return newFleetWith(t, source.EmbeddedOptions{})
}

func newFleetWith(t testing.TB, opts source.EmbeddedOptions) *testFleet {
	t.Helper()
	src, err := source.OpenEmbedded(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return &testFleet{src: src, app: src.Appender(context.Background())}
}

// series writes one sample a minute for minutes [from, to] and, like
// Prometheus's scrape loop when a series disappears, a staleness marker
// the minute after.
func (f *testFleet) series(t testing.TB, lset labels.Labels, from, to int, v func(i int) float64) {
	t.Helper()
	for i := from; i <= to; i++ {
		if _, err := f.app.Append(0, lset, minute(i).UnixMilli(), v(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.app.Append(0, lset, minute(to+1).UnixMilli(), math.Float64frombits(value.StaleNaN)); err != nil {
		t.Fatal(err)
	}
}

// scrape appends an exposition file at every minute of [from, to], then
// marks its series stale as a failing scrape would.
func (f *testFleet) scrape(t testing.TB, file string, from, to int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var series []labels.Labels
	for i := from; i <= to; i++ {
		if series, err = source.AppendExposition(f.app, data, "", minute(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, lset := range series {
		if _, err := f.app.Append(0, lset, minute(to+1).UnixMilli(), math.Float64frombits(value.StaleNaN)); err != nil {
			t.Fatal(err)
		}
	}
}

func (f *testFleet) commit(t testing.TB) source.Source {
	t.Helper()
	if err := f.app.Commit(); err != nil {
		t.Fatal(err)
	}
	f.app = f.src.Appender(context.Background())
	return f.src
}

func constant(v float64) func(int) float64 { return func(int) float64 { return v } }

func gpuLabels(name, node, uuid, model string, extra ...string) labels.Labels {
	return labels.FromStrings(append([]string{"__name__", name, "node", node, "gpu", "0", "uuid", uuid, "model", model}, extra...)...)
}

func containerLabels(name, node, uuid, model, ns, pod, sharing, gi, profile string, extra ...string) labels.Labels {
	return gpuLabels(name, node, uuid, model, append([]string{"namespace", ns, "pod", pod, "container", "main",
		"sharing", sharing, "gpu_instance", gi, "mig_profile", profile}, extra...)...)
}
