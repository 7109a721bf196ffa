package findings

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/vocab"
)

// builtScrapeDay scrapes testdata/counters files every minute for a day
// (a README there says how they were built). Each file is appended from its hour
// until the next file's, with no staleness markers, as a backfill or a
// copy of a TSDB holds them. The result is analysed as the CLI does, with
// the schema detected from the names.
func builtScrapeDay(t *testing.T, files map[time.Duration]string) (*fleet.Result, *Result) {
	t.Helper()
	ctx := context.Background()
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	end := start.Add(24 * time.Hour)
	data := map[time.Duration][]byte{}
	for at, file := range files {
		b, err := os.ReadFile(filepath.Join("testdata", "counters", file))
		if err != nil {
			t.Fatal(err)
		}
		data[at] = b
	}
	db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	app := db.Appender(ctx)
	var cur []byte
	for ts := start; !ts.After(end); ts = ts.Add(time.Minute) {
		if b, ok := data[ts.Sub(start)]; ok {
			cur = b
		}
		if _, err := source.AppendExposition(app, cur, "", ts); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	sch, err := source.Detect(ctx, db, start, end, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := query.Analyze(ctx, db, sch, fleet.Window{Start: start, End: end, Step: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return res, Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
}

// TestGREngineActiveOnly: an exporter whose counters file keeps only
// DCGM_FI_PROF_GR_ENGINE_ACTIVE (one of the default counters file's DCP
// fields, NVIDIA/dcgm-exporter etc/default-counters.csv at d5e5f51) still
// reports its GPUs, and a pod holding both at 0 all day is idle. Expected
// from the scrape: two H100s, each reported the whole day (1440 one-minute
// steps, 24 h) and held by ml/train-0 all of it, 48 GPU-hours of capacity
// all allocated; the pod's two GPUs at 0% make an idle-allocation
// finding. At main 36bc8ff each GPU was "reported for 0.0 h" with no
// allocation, and the only findings were insufficient data (issue 53,
// item 5): the GPUs' presence and tenants were read from FB_USED or
// GPU_UTIL alone.
func TestGREngineActiveOnly(t *testing.T) {
	res, report := builtScrapeDay(t, map[time.Duration]string{0: "gr-engine-only.prom"})
	if len(res.GPUs) != 2 {
		t.Fatalf("%d GPUs, want 2: %+v", len(res.GPUs), res.GPUs)
	}
	var capacity, allocated float64
	for _, g := range res.GPUs {
		if g.ReportedHours < 23.9 || g.ReportedHours > 24.1 || g.AllocatedHours < 23.9 || g.AllocatedHours > 24.1 {
			t.Errorf("GPU %s reported %.2f h, allocated %.2f h; want 24 h each", g.UUID, g.ReportedHours, g.AllocatedHours)
		}
		if g.UtilizationSteps == 0 || g.AvgUtilization != 0 {
			t.Errorf("GPU %s: utilization %v over %d steps, want 0 measured", g.UUID, g.AvgUtilization, g.UtilizationSteps)
		}
		capacity += g.ReportedHours
		allocated += g.AllocatedGPUHours
	}
	if capacity < 47.9 || capacity > 48.1 || allocated < 47.9 || allocated > 48.1 {
		t.Errorf("capacity %.2f GPU-hours, allocated %.2f; want 48 and 48", capacity, allocated)
	}
	pods := map[string]int{}
	for _, a := range res.Allocations {
		pods[a.Namespace+"/"+a.Pod]++
	}
	if len(pods) != 1 || pods["ml/train-0"] != 2 {
		t.Errorf("allocations by pod %v, want ml/train-0 on both GPUs", pods)
	}
	var idle, insufficient []Finding
	for _, f := range report.Findings {
		switch f.Kind {
		case vocab.KindIdleAllocation:
			idle = append(idle, f)
		case vocab.KindInsufficientData:
			insufficient = append(insufficient, f)
		}
	}
	if len(idle) == 0 || !strings.Contains(idle[0].Summary, "ml/train") || len(insufficient) != 0 {
		t.Errorf("want an idle-allocation finding for ml/train and no insufficient data; idle %+v, insufficient %+v", idle, insufficient)
	}
}

// TestDefaultLayoutIsNotPerProcess: the default layout's data, a pod on
// two GPUs for half the day and the device's own rows before and after,
// has no per-process series (those exist only under
// --kubernetes-virtual-gpus from dcgm-exporter #594, always with pod_uid:
// createPerProcessMetrics, internal/pkg/transformation/kubernetes.go:243
// at d5e5f51), so the report must not say it has. At main 36bc8ff it said
// "2 GPUs have per-tenant figures from dcgm-exporter's per-process
// series" (issue 53, item 6): the device row and the pod row, each
// lingering for the lookback beside the other where no staleness marker
// ended it, read as that layout.
func TestDefaultLayoutIsNotPerProcess(t *testing.T) {
	res, _ := builtScrapeDay(t, map[time.Duration]string{0: "default-unheld.prom", 6 * time.Hour: "default-held.prom", 18 * time.Hour: "default-unheld.prom"})
	notes := strings.Join(res.Notes, "\n")
	if strings.Contains(notes, "per-process series") || !strings.Contains(notes, "2 GPUs show at most one pod per device") {
		t.Errorf("notes %q: want the default layout's (at most one pod per device), and no per-process series", notes)
	}
	for _, g := range res.GPUs {
		if g.Attribution != fleet.AttributionOneTenant || g.ReportedHours < 23.9 {
			t.Errorf("GPU %s: attribution %q, reported %.2f h; want one-tenant over 24 h", g.UUID, g.Attribution, g.ReportedHours)
		}
	}
}

// TestMixedCountersFiles: one store of two nodes whose dcgm-exporters
// keep different counters files, gpu-node-1's trimmed to
// DCGM_FI_PROF_GR_ENGINE_ACTIVE, gpu-node-2's the default (GPU_UTIL,
// FB_*, GR_ENGINE_ACTIVE: NVIDIA/dcgm-exporter etc/default-counters.csv
// at d5e5f51), as a fleet upgraded node pool by node pool or with a
// per-pool values file has. Expected from testdata/counters/
// mixed-trimmed.prom, scraped every minute for a day: four H100s, each
// reported 24 h (1440 one-minute steps) and held all of it, 96 GPU-hours
// of capacity all allocated; ml/idle-0 on gpu-node-1's two GPUs at 0 is
// idle, ml/busy-0 on gpu-node-2's at 85% is not. Before this, the store
// holding FB_USED made every GPU's presence and tenants read from FB_USED
// (dcgm.Schema.Fit), and gpu-node-1's GPUs were not there at all.
func TestMixedCountersFiles(t *testing.T) {
	res, report := builtScrapeDay(t, map[time.Duration]string{0: "mixed-trimmed.prom"})
	want := map[string]struct {
		node, pod string
		util      float64
	}{
		"GPU-5e1d0c1a-7f3b-4c2e-9a61-0b7d2f4e8c10": {"gpu-node-1", "ml/idle-0", 0},
		"GPU-9b2c4d6e-1a3f-4e5d-8c7b-2f0e1d3c5a79": {"gpu-node-1", "ml/idle-0", 0},
		"GPU-3c7a9e21-4b6d-4f80-a2c3-5d7e9f1b3a40": {"gpu-node-2", "ml/busy-0", 0.85},
		"GPU-3c7a9e21-4b6d-4f80-a2c3-5d7e9f1b3a41": {"gpu-node-2", "ml/busy-0", 0.85},
	}
	if len(res.GPUs) != len(want) {
		t.Fatalf("%d GPUs, want %d: %+v", len(res.GPUs), len(want), res.GPUs)
	}
	var capacity, allocated float64
	for _, g := range res.GPUs {
		w, ok := want[g.UUID]
		if !ok || g.Node != w.node {
			t.Errorf("GPU %s on %s: not one of the fixture's", g.UUID, g.Node)
			continue
		}
		if g.ReportedHours < 23.9 || g.ReportedHours > 24.1 || g.AllocatedHours < 23.9 || g.AllocatedHours > 24.1 {
			t.Errorf("GPU %s reported %.2f h, allocated %.2f h; want 24 h each", g.UUID, g.ReportedHours, g.AllocatedHours)
		}
		if g.UtilizationSteps == 0 || math.Abs(g.AvgUtilization-w.util) > 1e-9 {
			t.Errorf("GPU %s: utilization %v over %d steps, want %v measured", g.UUID, g.AvgUtilization, g.UtilizationSteps, w.util)
		}
		capacity += g.ReportedHours
		allocated += g.AllocatedGPUHours
	}
	if capacity < 95.9 || capacity > 96.1 || allocated < 95.9 || allocated > 96.1 {
		t.Errorf("capacity %.2f GPU-hours, allocated %.2f; want 96 and 96", capacity, allocated)
	}
	onGPU := map[string]string{}
	for _, a := range res.Allocations {
		onGPU[a.UUID] = a.Namespace + "/" + a.Pod
		if w := want[a.UUID]; a.Namespace+"/"+a.Pod != w.pod || a.HeldHours < 23.9 || math.Abs(a.AvgUtilization-w.util) > 1e-9 {
			t.Errorf("allocation %s/%s on %s: held %.2f h at %v; want %s for 24 h at %v", a.Namespace, a.Pod, a.UUID, a.HeldHours, a.AvgUtilization, w.pod, w.util)
		}
	}
	if len(onGPU) != len(want) || len(res.Allocations) != len(want) {
		t.Errorf("allocations %v, want one per GPU", onGPU)
	}
	var idle []string
	for _, f := range report.Findings {
		switch f.Kind {
		case vocab.KindIdleAllocation:
			idle = append(idle, f.Summary)
		case vocab.KindInsufficientData:
			t.Errorf("insufficient data: %s", f.Summary)
		}
	}
	if len(idle) != 1 || !strings.Contains(idle[0], "ml/idle") || strings.Contains(idle[0], "busy") {
		t.Errorf("idle findings %q, want one, for ml/idle-0's workload only", idle)
	}
}
