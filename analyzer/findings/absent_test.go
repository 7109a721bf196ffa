package findings

import (
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/vocab"
)

// TestAbsentGPU guards issue 53 item 3 on hand-made results: a GPU gone
// at the window's end from a node whose other GPU reported to it
// (fleet.Result.Absent) is said gone since its last step, for the rest of
// the window. On main 36bc8ff a GPU that vanished without XID 79 or
// gpulens_gpu_up 0 had no finding at all (dcgm-exporter's way of losing
// a GPU: its blank readings are skipped, exporter/sim/fleet/dcgm.go), and
// one lost early in the window was only "too little to judge".
//
// dcgm-exporter's --kubernetes-virtual-gpus before 2025 writes a GPU's
// series only while a pod holds it, so on dcgm-exporter a GPU whose
// series ended with its last pod's is only info (podBound); that a
// release writes no series for an unheld GPU is the simulator's reading
// of it (exporter/sim/fleet DCGMVirtualGPUs), not confirmed here against
// dcgm-exporter's source. The whole node stopping is stale data, never a
// GPU gone (passes at main too: it guards the new rule).
func TestAbsentGPU(t *testing.T) {
	const gone = 44*time.Hour + 42*time.Minute
	type gpuCase struct {
		uuid     string
		since    time.Duration
		held     bool // a pod held it, its series ending with the GPU's
		coverage float64
		xid79    bool
	}
	for _, tc := range []struct {
		name   string
		schema string
		gpus   []gpuCase
		// sev is the gpu-errors finding's severity for GPU-gone; "" none.
		sev  Severity
		want string
	}{
		{name: "native, vanished unheld", schema: "native", gpus: []gpuCase{{uuid: "GPU-on"}, {uuid: "GPU-gone", since: gone}},
			sev: Warning, want: "stopped reporting: gone since 2026-03-07T03:18:00Z, for the window's last 44.7 h, while the node's 1 other GPU kept reporting"},
		{name: "dcgm, vanished unheld", schema: dcgm.SchemaName, gpus: []gpuCase{{uuid: "GPU-on"}, {uuid: "GPU-gone", since: gone}},
			sev: Warning, want: "stopped reporting: gone since"},
		{name: "dcgm, vanished with its pod", schema: dcgm.SchemaName, gpus: []gpuCase{{uuid: "GPU-on"}, {uuid: "GPU-gone", since: gone, held: true}},
			sev: Info, want: "stopped reporting with its last pod: gone since"},
		{name: "fell off early, scant data", schema: "native", gpus: []gpuCase{{uuid: "GPU-on"}, {uuid: "GPU-gone", since: 140 * time.Hour, coverage: 28.0 / 168, xid79: true}},
			sev: Critical, want: "XID 79) and was lost and gone since 2026-03-03T04:00:00Z, for the window's last 140.0 h"},
		{name: "whole node stopped", schema: "native", gpus: []gpuCase{{uuid: "GPU-on", since: 2 * time.Hour}, {uuid: "GPU-gone", since: 2 * time.Hour}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gpus []fleet.GPU
			var allocs []fleet.Allocation
			for _, c := range tc.gpus {
				g := gpu(c.uuid, h100, "", 80*GiB)
				g.SinceLastSeen, g.AllocatedHours, g.UnallocatedHours = c.since, 0, 168
				if c.coverage > 0 {
					g.Coverage, g.Steps, g.ReportedHours = c.coverage, int(c.coverage*10080), c.coverage*168
				}
				if c.xid79 {
					g.XIDErrors, g.XIDCodes = 1, []string{"79"}
				}
				if c.held {
					a := alloc("train", c.uuid, h100, "none", "", 1, 0.9, 0.95, 60*GiB)
					a.SinceLastSeen = c.since
					allocs = append(allocs, a)
				}
				gpus = append(gpus, g)
			}
			res := result(allocs, gpus)
			res.Schema = tc.schema
			r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
			var got *Finding
			for i, f := range r.Findings {
				if f.GPUUUID == "GPU-gone" && (f.Kind == vocab.KindGPUErrors || f.Kind == vocab.KindInsufficientData) {
					got = &r.Findings[i]
				}
			}
			switch {
			case tc.sev == "" && got != nil:
				t.Errorf("want no finding on GPU-gone, got %s %s: %s", got.Kind, got.Severity, got.Summary)
			case tc.sev == "":
			case got == nil:
				t.Errorf("no gpu-errors finding on GPU-gone\n%s", summaries(r))
			case got.Kind != vocab.KindGPUErrors || got.Severity != tc.sev || !strings.Contains(got.Summary, tc.want):
				t.Errorf("got %s %s %q, want %s %s with %q", got.Kind, got.Severity, got.Summary, vocab.KindGPUErrors, tc.sev, tc.want)
			}
		})
	}
}
