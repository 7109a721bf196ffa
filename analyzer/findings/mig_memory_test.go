package findings

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
)

// TestH100MIGWithoutMemory: DCGM reports no FB_USED or FB_FREE for the GPU
// instances of an H100 in MIG mode (dcgm-exporter #380, #434, #512), only
// the profiling fields. The slice and its tenant must still be seen, with
// the share of its profile (3g.40gb: 3 of the H100's 7 compute slices, from
// the scenario), its memory unknown rather than zero, and a note saying so.
func TestH100MIGWithoutMemory(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "scenarios", "mig-oversized.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range []mode{dcgmOnePod, dcgmCopies, dcgmPerProc} {
		m := base
		m.noMIGMemory = true
		t.Run(m.String(), func(t *testing.T) {
			res := analyzeScenario(t, s, m, scenarioStart, scenarioEnd, scenarioStep)
			var found bool
			for _, a := range res.Allocations {
				if a.Pod != "ocr-serving" {
					continue
				}
				found = true
				if a.Sharing != vocab.SharingMIG || a.MIGProfile != "3g.40gb" || a.Share < 3.0/7-1e-9 || a.Share > 3.0/7+1e-9 {
					t.Errorf("ocr-serving: %s %s share %v, want mig 3g.40gb 3/7", a.Sharing, a.MIGProfile, a.Share)
				}
				if a.MemorySteps != 0 || a.PeakMemoryBytes != 0 {
					t.Errorf("ocr-serving: memory %v over %d steps, but DCGM reported none", a.PeakMemoryBytes, a.MemorySteps)
				}
				if a.UtilizationSteps == 0 {
					t.Error("ocr-serving: no utilization, but GR_ENGINE_ACTIVE was reported")
				}
			}
			if !found {
				t.Fatalf("the MIG slice's tenant vanished: %+v", res.Allocations)
			}
			if len(res.GPUs) != 1 {
				t.Errorf("%d GPUs, want the H100", len(res.GPUs))
			}
			if !strings.Contains(strings.Join(res.Notes, "\n"), "memory is unknown") {
				t.Errorf("notes %q: want one saying the slices' memory is unknown", res.Notes)
			}
		})
	}
}

// TestH100MIGUndersizedWithoutMemory: a slice busy at its limit is too
// small whatever its memory. testdata/scenarios/mig-undersized.yaml runs
// training at 0.97 of a 1g.10gb slice, above mig.undersized_ratio (0.95),
// and DCGM on an H100 in MIG mode reports no FB_* for the instance: the
// slice is still called undersized, and the finding says its memory is
// unknown instead of quoting a 0 GiB peak.
func TestH100MIGUndersizedWithoutMemory(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "scenarios", "mig-undersized.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const planted = 0.97 // the scenario's utilization of feature-train
	if planted < criteria.DefaultConfig().MIG.UndersizedRatio {
		t.Fatalf("the scenario no longer plants a slice above mig.undersized_ratio")
	}
	for _, base := range []mode{dcgmOnePod, dcgmStock, dcgmCopies, dcgmPerProc, {schema: dcgm.Schema{}, layout: fleet.DCGMNoVirtualGPUs, legacy: true}} {
		m := base
		m.noMIGMemory = true
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			r := runScenario(t, s, m, nil)
			f := match(r, want{vocab.KindMIGUndersized, "feature-train", -1, Warning}, nil)
			if f == nil {
				t.Fatalf("no mig-undersized finding for feature-train:\n%s", summaries(r))
			}
			if f.Evidence["memory_unknown"] != 1 || !strings.Contains(f.Summary, "memory is unknown") || strings.Contains(f.Summary, "0.0 GiB") {
				t.Errorf("the finding must say the slice's memory is unknown: %s %v", f.Summary, f.Evidence)
			}
		})
	}
}
