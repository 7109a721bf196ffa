package findings

import (
	"path/filepath"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/vocab"
)

// TestPerProcessWithoutHostPID: dcgm-exporter's per-process layout maps
// processes to pods through the host's /proc, which it cannot read without
// hostPID (the GPU Operator's default): every pod row is 0 while the
// device's own row is busy. From the scenario, the L4's tenants run at 25%
// and 30% and fill its memory: neither may read as idle, the GPU is read
// from the device's figures, and the OOM risk is still found.
func TestPerProcessWithoutHostPID(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "scenarios", "timeslice-oom-risk.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := dcgmPerProc
	m.noHostPID = true
	res := analyzeScenario(t, s, m, scenarioStart, scenarioEnd, scenarioStep)
	if len(res.GPUs) != 1 || res.GPUs[0].Attribution != fleet.AttributionCopies {
		t.Fatalf("GPUs %+v: want the L4 read from the device's figures", res.GPUs)
	}
	for _, a := range res.Allocations {
		// The device's utilization: at least the busier tenant's 30%, less
		// the scenario's ±3% noise.
		if a.AvgUtilization < 0.25 {
			t.Errorf("%s: average utilization %.3f, want the device's", a.Pod, a.AvgUtilization)
		}
	}
	r := Detect(res, nil, criteria.DefaultConfig(), nil)
	for _, f := range r.Findings {
		if f.Kind == vocab.KindIdleAllocation {
			t.Errorf("a busy tenant reads as idle: %s", f.Summary)
		}
	}
	if f := match(r, want{vocab.KindTimesliceOOMRisk, "", 0, ""}, uuidsOf(s)); f == nil {
		t.Errorf("no OOM risk on the shared L4:\n%s", summaries(r))
	}
}
