package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/signals/dcgm"
)

// TestVictoriaMetricsMixedCounters: the store of two nodes whose
// dcgm-exporters keep different counters files
// (analyzer/findings/testdata/counters/mixed-trimmed.prom, scraped every
// minute for two hours) read through VictoriaMetrics, whose MetricsQL
// answers the probe (dcgm.Schema.MixedProbe) and the tenants read from
// several names by one regex (last_over_time over them keeps the names
// apart there too). Expected from the file: the store is read as mixed,
// four H100s each reported the two hours and held by the pod of its
// node, the trimmed node's at 0, the other's at 0.85.
func TestVictoriaMetricsMixedCounters(t *testing.T) {
	vm := testenv.LookPath(t, "victoria-metrics")
	t.Parallel()
	ctx := context.Background()
	addr := testenv.FreeAddr(t)
	startServer(t, "victoria-metrics", vm, httpURL(addr, "/health"),
		"-storageDataPath="+t.TempDir(), "-httpListenAddr="+addr, "-retentionPeriod=100y", "-search.disableCache")
	data, err := os.ReadFile("../analyzer/findings/testdata/counters/mixed-trimmed.prom")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	end := start.Add(2 * time.Hour)
	var body bytes.Buffer
	for ts := start; !ts.After(end); ts = ts.Add(time.Minute) {
		for _, line := range strings.Split(string(data), "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				fmt.Fprintf(&body, "%s %d\n", line, ts.UnixMilli())
			}
		}
	}
	post(t, httpURL(addr, "/api/v1/import/prometheus"), "text/plain", body.Bytes())
	post(t, httpURL(addr, "/internal/force_flush"), "text/plain", nil)
	src := remoteEngine(t, httpURL(addr, ""))

	sch, err := source.Detect(ctx, src, start, end, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := sch.(dcgm.Schema); !ok || d.MixedNames == "" {
		t.Fatalf("schema %#v, want dcgm-exporter read as of mixed counters files", sch)
	}
	res, err := query.Analyze(ctx, src, sch, fleet.Window{Start: start, End: end, Step: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		pod  string
		util float64
	}{
		"GPU-5e1d0c1a-7f3b-4c2e-9a61-0b7d2f4e8c10": {"idle-0", 0},
		"GPU-9b2c4d6e-1a3f-4e5d-8c7b-2f0e1d3c5a79": {"idle-0", 0},
		"GPU-3c7a9e21-4b6d-4f80-a2c3-5d7e9f1b3a40": {"busy-0", 0.85},
		"GPU-3c7a9e21-4b6d-4f80-a2c3-5d7e9f1b3a41": {"busy-0", 0.85},
	}
	if len(res.GPUs) != len(want) || len(res.Allocations) != len(want) {
		t.Fatalf("%d GPUs and %d allocations, want %d of each: %+v", len(res.GPUs), len(res.Allocations), len(want), res.GPUs)
	}
	for _, g := range res.GPUs {
		if _, ok := want[g.UUID]; !ok || g.ReportedHours < 1.98 || g.AllocatedHours < 1.98 {
			t.Errorf("GPU %s: reported %.3f h, allocated %.3f h; want one of the fixture's, 2 h each", g.UUID, g.ReportedHours, g.AllocatedHours)
		}
	}
	for _, a := range res.Allocations {
		if w := want[a.UUID]; a.Pod != w.pod || math.Abs(a.AvgUtilization-w.util) > 1e-9 {
			t.Errorf("allocation %s on %s at %v, want %s at %v", a.Pod, a.UUID, a.AvgUtilization, w.pod, w.util)
		}
	}
}
