package query_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals/dcgm"

	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
)

// upstreamWindow replays a pasted /metrics snapshot once a minute for an
// hour: what a scrape of an unchanging exporter stores.
func upstreamWindow(t *testing.T, file string) (*source.Embedded, fleet.Window) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "upstream", file))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	w := fleet.Window{Start: start, End: start.Add(time.Hour), Step: time.Minute}
	return pipelinetest.Scraped(t, data, w.Start, w.End, w.Step), w
}

// TestUpstreamH100MIGWithoutMemory: dcgm-exporter #512's paste, an H100
// in MIG mode without DCGM_FI_DEV_FB_*: two of its three 1g.10gb
// instances held by pods, all idle. Each pod holds one of the GPU's 7
// compute slices (NVIDIA's MIG user guide), at 0 load, and the report
// says memory is unknown.
func TestUpstreamH100MIGWithoutMemory(t *testing.T) {
	db, w := upstreamWindow(t, "h100-mig-no-fb.prom")
	sch, err := source.Detect(context.Background(), db, w.Start, w.End, nil)
	if err != nil || sch.Name() != dcgm.SchemaName {
		t.Fatalf("detected %v, %v; want dcgm-exporter", sch, err)
	}
	res, err := query.Analyze(context.Background(), db, sch, w)
	if err != nil {
		t.Fatal(err)
	}
	wantPods := []string{"embed-predictor-00008-deployment-57946f6c67-bcdfg", "tts-predictor-00011-deployment-5554f75554-hjklm"}
	if len(res.Allocations) != len(wantPods) {
		t.Fatalf("%d allocations, want %d: %+v", len(res.Allocations), len(wantPods), res.Allocations)
	}
	for i, a := range res.Allocations {
		if a.Pod != wantPods[i] || a.Namespace != "team-a" || a.Sharing != vocab.SharingMIG || a.MIGProfile != "1g.10gb" ||
			math.Abs(a.Share-1.0/7) > 1e-9 || a.AvgUtilization != 0 || a.Steps != w.ExpectedSteps() || a.Node != "h100-node-1" {
			t.Errorf("allocation %+v: want %s on a 1g.10gb slice (1/7), idle, held every step, on h100-node-1", a, wantPods[i])
		}
	}
	if len(res.GPUs) != 1 || res.GPUs[0].Model != "NVIDIA H100 80GB HBM3" {
		t.Errorf("GPUs %+v, want the one H100", res.GPUs)
	}
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "memory is unknown") {
		t.Errorf("notes %q: want memory said to be unknown", notes)
	}
	// The workloads are the two KServe Deployments, from their pods' names.
	var names []string
	for _, wl := range res.Workloads {
		names = append(names, wl.Kind+"/"+wl.Name)
	}
	if got := strings.Join(names, " "); got != "Deployment/embed-predictor-00008-deployment Deployment/tts-predictor-00011-deployment" {
		t.Errorf("workloads %s", got)
	}
}

// TestUpstreamA30MIGUnheld: dcgm-exporter #317's paste, two A30s whose
// 1g.6gb instances no pod holds: two GPUs, no allocation, each GPU's
// memory the sum of its instances' (4 and 2 instances of 3 MiB).
func TestUpstreamA30MIGUnheld(t *testing.T) {
	db, w := upstreamWindow(t, "a30-mig-unheld.prom")
	res, err := query.Analyze(context.Background(), db, dcgm.Schema{}, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Allocations) != 0 {
		t.Errorf("allocations %+v, want none", res.Allocations)
	}
	const mib = 1 << 20
	want := map[string]float64{"GPU-3170a300-0000-4000-8000-000000000000": 4 * 3 * mib, "GPU-3170a301-0000-4000-8000-000000000001": 2 * 3 * mib}
	if len(res.GPUs) != len(want) {
		t.Fatalf("GPUs %+v, want %d", res.GPUs, len(want))
	}
	for _, g := range res.GPUs {
		if g.Model != "NVIDIA A30" || g.Node != "a30-node-1" || g.MemoryUsedPeakBytes != want[g.UUID] || g.AllocatedHours != 0 || g.UnallocatedHours != g.ReportedHours {
			t.Errorf("GPU %+v: want an unheld A30 on a30-node-1 using %v bytes", g, want[g.UUID])
		}
	}
}
