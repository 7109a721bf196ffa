package findings

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

// TestGoldenNativeFleet runs a small fleet's series through the embedded
// Prometheus engine, the real query set and Detect, and compares the
// report with testdata/native-fleet.golden.json (go test -update rewrites
// it). internal/fleet cannot feed this yet: the exporter does not emit the
// per-container series, so the series are written here as the exporter
// documents them (docs/METRICS.md).
func TestGoldenNativeFleet(t *testing.T) {
	src, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	app := src.Appender(context.Background())
	minute := func(i int) int64 { return t0.Add(time.Duration(i) * time.Minute).UnixMilli() }
	series := func(name string, lbls []string, f func(i int) float64) {
		lset := labels.FromStrings(append([]string{"__name__", name}, lbls...)...)
		for i := 1; i <= 240; i++ {
			if math.IsNaN(f(i)) {
				continue // no sample: the series does not exist yet
			}
			if _, err := app.Append(0, lset, minute(i), f(i)); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := app.Append(0, lset, minute(241), math.Float64frombits(value.StaleNaN)); err != nil {
			t.Fatal(err)
		}
	}
	constant := func(v float64) func(int) float64 { return func(int) float64 { return v } }
	dev := func(node, uuid, model string) []string {
		return []string{"node", node, "gpu", "0", "uuid", uuid, "model", model}
	}
	physical := func(node, uuid, model string, util float64, mem float64, used func(int) float64) {
		series("gpulens_gpu_info", dev(node, uuid, model), constant(1))
		series("gpulens_gpu_up", dev(node, uuid, model), constant(1))
		series("gpulens_gpu_utilization_ratio", dev(node, uuid, model), constant(util))
		series("gpulens_gpu_memory_total_bytes", dev(node, uuid, model), constant(mem))
		series("gpulens_gpu_memory_used_bytes", dev(node, uuid, model), used)
	}
	container := func(node, uuid, model, ns, pod, sharing, gi, profile string, share float64, util, mem func(int) float64) {
		l := append(dev(node, uuid, model), "namespace", ns, "pod", pod, "container", "main", "gpu_instance", gi, "mig_profile", profile)
		series("gpulens_container_gpu_allocation_ratio", append(l, "sharing", sharing), constant(share))
		series("gpulens_container_gpu_utilization_ratio", append(l, "method", "device"), util)
		series("gpulens_container_gpu_memory_used_bytes", append(l, "method", "device"), mem)
	}
	// An idle notebook on a whole H100, with an XID 13 (the application's,
	// not a GPU fault) at minute 200.
	physical("gpu-1", "GPU-idle", h100, 0.01, 80*GiB, constant(3*GiB))
	container("gpu-1", "GPU-idle", h100, "research", "alice-jupyter", "none", "", "", 1, constant(0.01), constant(3*GiB))
	series("gpulens_gpu_xid_errors_total", append(dev("gpu-1", "GPU-idle", h100), "xid", "13"), func(i int) float64 {
		return map[bool]float64{true: 1, false: math.NaN()}[i >= 200]
	})
	// An unallocated H100 that throttles for heat a quarter of the time.
	physical("gpu-1", "GPU-free", h100, 0, 80*GiB, constant(0))
	series("gpulens_gpu_throttle_active", append(dev("gpu-1", "GPU-free", h100), "reason", "hw_thermal_slowdown"), func(i int) float64 {
		return map[bool]float64{true: 1, false: 0}[i%4 == 0]
	})
	// A 3g.40gb slice serving at 20%: oversized.
	physical("gpu-2", "GPU-mig", h100, 0.1, 80*GiB, constant(5*GiB))
	container("gpu-2", "GPU-mig", h100, "team-vision", "ocr", "mig", "1", "3g.40gb", 3.0/7, constant(0.2), constant(5*GiB))
	// A time-sliced A100 with a leaking worker: OOM risk.
	leak := func(i int) float64 { return 8*GiB + float64(i)*0.125*GiB }
	physical("gpu-3", "GPU-ts", a100, 0.4, 80*GiB, func(i int) float64 { return 20*GiB + leak(i) })
	container("gpu-3", "GPU-ts", a100, "team-nlp", "summarizer", "time-slicing", "", "", 0.25, constant(0.3), constant(20*GiB))
	container("gpu-3", "GPU-ts", a100, "team-nlp", "leaky-worker", "time-slicing", "", "", 0.25, constant(0.2), leak)
	// A trainer on a whole H100, busy: no finding.
	physical("gpu-4", "GPU-busy", h100, 0.9, 80*GiB, constant(70*GiB))
	container("gpu-4", "GPU-busy", h100, "team-nlp", "pretrain", "none", "", "", 1, constant(0.92), constant(70*GiB))
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}

	res, err := query.Analyze(context.Background(), src, native.Schema{}, fleet.Window{Start: t0, End: t0.Add(4 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	report := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
	got, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	const golden = "testdata/native-fleet.golden.json"
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(append(got, '\n')) != string(want) {
		t.Errorf("report differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	// The golden is reviewed by eye; these pin what it must show.
	for _, k := range []vocab.Kind{vocab.KindIdleAllocation, vocab.KindUnallocated, vocab.KindThermal, vocab.KindMIGOversized, vocab.KindTimesliceOOMRisk, vocab.KindWorkloadXID} {
		if find(report, k) == nil {
			t.Errorf("no %s finding", k)
		}
	}
}
