package findings

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals/dcgm"
)

// realScrapeDay is a published /metrics excerpt (testdata/realscrapes,
// provenance in each file) scraped every minute for a day into a real
// TSDB, analysed as the CLI does: schema detected from the names.
func realScrapeDay(t *testing.T, file string) (*fleet.Result, *Result) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "realscrapes", file))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	end := start.Add(24 * time.Hour)
	db := pipelinetest.Scraped(t, data, start, end, time.Minute)
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

// TestBusyGPUWithoutPodOrFBUsed: NVIDIA/gpu-monitoring-tools#138 (2020),
// a whole GPU at 44% whose every series has pod="" and whose excerpt has
// no DCGM_FI_DEV_FB_USED (issue 42, cases 2 and 4). Expected from the
// excerpt: one GPU, reported the whole day (1440 one-minute steps over
// 24 h), 44% busy, no allocation, no memory figure (unknown, not 0); it
// is in use by a tenant the data cannot name, so it is info, never free
// capacity to scale down.
func TestBusyGPUWithoutPodOrFBUsed(t *testing.T) {
	res, report := realScrapeDay(t, "busy-no-pod.prom")
	if len(res.GPUs) != 1 {
		t.Fatalf("%d GPUs, want 1: %+v", len(res.GPUs), res.GPUs)
	}
	g := res.GPUs[0]
	if g.UUID != "GPU-6bf47ca9-ad3e-15db-beed-1079a7d74116" || g.ReportedHours < 23.9 || g.ReportedHours > 24.1 {
		t.Errorf("GPU %s reported %.2f h, want GPU-6bf47ca9-... for 24 h", g.UUID, g.ReportedHours)
	}
	if g.AvgUtilization < 0.4399 || g.AvgUtilization > 0.4401 {
		t.Errorf("average utilization %v, want 0.44", g.AvgUtilization)
	}
	if g.AllocatedHours != 0 || len(res.Allocations) != 0 {
		t.Errorf("allocated %.2f h, %d allocations: pod=\"\" is no pod", g.AllocatedHours, len(res.Allocations))
	}
	if g.MemoryUsedSteps != 0 || g.MemoryTotalBytes != 0 {
		t.Errorf("memory %d steps, total %v: without FB_* it is unknown, not a figure", g.MemoryUsedSteps, g.MemoryTotalBytes)
	}
	var unalloc []Finding
	for _, f := range report.Findings {
		if f.Kind == vocab.KindUnallocated {
			unalloc = append(unalloc, f)
		}
	}
	if len(unalloc) != 1 || unalloc[0].Severity != Info || unalloc[0].Recommendation != nil ||
		!strings.Contains(unalloc[0].Summary, "in use, not free capacity") || unalloc[0].Evidence["min_utilization_while_unallocated"] < 0.43 {
		t.Errorf("want one info finding that the GPU is in use by a tenant the data does not name, got %+v", unalloc)
	}
}

// TestFitReadsTenantsWithoutFBUsed: a store with no FB_USED under any
// name reads its tenants from GPU_UTIL.
func TestFitReadsTenantsWithoutFBUsed(t *testing.T) {
	if got := (dcgm.Schema{}).Fit([]string{dcgm.GPUUtil, dcgm.PowerUsage}).TenantField; got != dcgm.GPUUtil {
		t.Errorf("no FB_USED: tenants from %q, want GPU_UTIL", got)
	}
	if got := (dcgm.Schema{}).Fit([]string{"DCGM_FI_DEV_FB_USED_BYTES", "DCGM_FI_DEV_GPU_UTIL_RATIO"}).TenantField; got != "" {
		t.Errorf("FB_USED in 4.9's name: tenants from %q, want FB_USED", got)
	}
	// A counters file trimmed to GR_ENGINE_ACTIVE (issue 53, item 5; at
	// main 36bc8ff the tenants stayed FB_USED's, which the store lacks).
	if got := (dcgm.Schema{}).Fit([]string{dcgm.GREngineActive, dcgm.XIDErrors}).TenantField; got != dcgm.GREngineActive {
		t.Errorf("GR_ENGINE_ACTIVE alone: tenants from %q, want GR_ENGINE_ACTIVE", got)
	}
	if got := (dcgm.Schema{}).Fit([]string{dcgm.GREngineActive, dcgm.GPUUtil}).TenantField; got != dcgm.GPUUtil {
		t.Errorf("GPU_UTIL and GR_ENGINE_ACTIVE: tenants from %q, want GPU_UTIL", got)
	}
}
