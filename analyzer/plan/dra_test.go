package plan

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"

	"github.com/gpulens/gpulens/analyzer/source"
)

// TestDRALanes plans four hours of the DRA fleet of
// signals/testdata/*.dra.prom under each exporter's series: the
// lanes of pod1 and pod2 (claim single-gpu), of the A30 slice's pod and of
// infer read as DRA with their claims, trainer-0's as the device plugin's.
// The A100 pool (trainer-0 at 90%, infer at 10% of a whole GPU) is planned
// like any other, but infer gets no limits patch, and the node labels the
// YAML gives say they do not configure its GPU.
func TestDRALanes(t *testing.T) {
	const infer = "ml/infer-7d9f8c6b5-x2k9q-gpu-m4t7w"
	for _, sch := range []signals.Schema{native.Schema{}, dcgm.Schema{}} {
		t.Run(sch.Name(), func(t *testing.T) {
			file := map[string]string{native.SchemaName: "native.dra.prom", dcgm.SchemaName: "dcgm-exporter.dra.prom"}[sch.Name()]
			src, w := replayed(t, "../../signals/testdata/"+file, 4*time.Hour)
			d, err := fetch(context.Background(), src, sch, w, 0, Options{TrainingMinLoad: 0.8, TrainingMinHours: 2})
			if err != nil {
				t.Fatal(err)
			}
			paths := map[string]string{}
			for _, p := range d.Pools {
				for _, l := range p.Lanes {
					paths[l.Name()] = string(l.AllocationPath) + " " + strings.Join(l.Claims, ",")
				}
			}
			want := map[string]string{
				"Pod/gpu-test3/pod1":         "dra gpu-test3/single-gpu",
				"Pod/gpu-test3/pod2":         "dra gpu-test3/single-gpu",
				"Deployment/gpu-test4/pod":   "dra gpu-test4/pod-c98945f5d-dnjs6-mig-devices-thfdj",
				"StatefulSet/team-a/trainer": "device-plugin ",
				"Deployment/ml/infer":        "dra " + infer,
			}
			if len(paths) != len(want) {
				t.Errorf("lanes %v, want %v", paths, want)
			}
			for lane, p := range want {
				if paths[lane] != p {
					t.Errorf("lane %s: %q, want %q", lane, paths[lane], p)
				}
			}
			if !strings.Contains(strings.Join(d.Notes, "\n"), "4 allocations got their GPU through DRA ResourceClaims") {
				t.Errorf("notes %q do not count the 4 DRA allocations", d.Notes)
			}
			p, err := Make(d, DefaultPolicy(), price.DefaultPrices())
			if err != nil {
				t.Fatal(err)
			}
			var y bytes.Buffer
			if err := Write(&y, p, "yaml"); err != nil {
				t.Fatal(err)
			}
			out := y.String()
			for _, s := range []string{
				"# Deployment/ml/infer: whole through DRA (" + infer + ")",
				"# No limits patch: its pods get the GPU from a ResourceClaim.",
				"through DRA ResourceClaims. The NVIDIA DRA driver",
				"nvidia.com/device-plugin.config and nvidia.com/mig.config do not configure it",
			} {
				if !strings.Contains(out, s) {
					t.Errorf("yaml lacks %q:\n%s", s, out)
				}
			}
			// infer's only patch would be a limits patch: none.
			if strings.Contains(out, "kubectl -n ml patch deployment infer") {
				t.Errorf("yaml patches infer's limits:\n%s", out)
			}
		})
	}
}

// replayed stores an exposition file scraped once a minute over d.
func replayed(t *testing.T, file string, d time.Duration) (source.Source, fleet.Window) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	w := fleet.Window{Start: start, End: start.Add(d), Step: time.Minute}
	return pipelinetest.Scraped(t, data, w.Start, w.End, w.Step), w
}
