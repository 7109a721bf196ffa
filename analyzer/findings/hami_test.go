package findings

import (
	"testing"

	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"
)

// TestHAMiChecks: each check on hand-made tenants of an A100 80GB
// ($3.43/h). Savings by hand: (held − new share) × 3.43 × 730.
func TestHAMiChecks(t *testing.T) {
	base := HAMiTenant{Namespace: "a", Pod: "p", Container: "main", GPUUUID: "GPU-1", Model: "NVIDIA A100-SXM4-80GB",
		DeviceBytes: 80 << 30, Coverage: 1}
	tenant := func(cores, memGiB int64, p99, peak, util float64) HAMiTenant {
		tn := base
		tn.CoresPct, tn.MemoryMiB, tn.MemP99, tn.MemPeak, tn.UtilP95 = cores, memGiB*1024, p99*(1<<30), peak*(1<<30), util
		return tn
	}
	tests := []struct {
		name   string
		t      HAMiTenant
		kind   vocab.Kind
		saving float64
	}{
		// cores 80 held, p95 0.2: new ceil(0.2 × 1.25 × 100) = 25; held
		// max(0.8, 10/80) → max(0.25, 0.125): 0.55 × 2503.9 = 1377.15.
		{"cores idle", tenant(80, 10, 6, 7, 0.2), KindHAMiGPUCoresIdle, 1377.15},
		// cores 40 at p95 0.39 ≥ 0.95 × 0.4: new 60; 0.4 → 0.6: −0.2 × 2503.9 = −500.78.
		{"cores pinned", tenant(40, 10, 6, 7, 0.39), KindHAMiGPUCoresPinned, -500.78},
		// healthy: p99 6 of 10 GiB, p95 0.3 of 0.4.
		{"healthy", tenant(40, 10, 6, 7, 0.3), "", 0},
		// unlimited cores are not judged.
		{"unlimited cores", tenant(0, 10, 6, 7, 0.3), "", 0},
	}
	for _, tt := range tests {
		got := DetectHAMi([]HAMiTenant{tt.t}, price.DefaultPrices())
		if tt.kind == "" {
			if len(got) != 0 {
				t.Errorf("%s: %d findings: %s", tt.name, len(got), got[0].Summary)
			}
			continue
		}
		if len(got) != 1 || got[0].Kind != tt.kind || got[0].MonthlySavingsUSD != tt.saving {
			for _, f := range got {
				t.Logf("%s %v %s", f.Kind, f.MonthlySavingsUSD, f.Summary)
			}
			t.Errorf("%s: want one %s saving %v", tt.name, tt.kind, tt.saving)
		}
	}
	// Too few readings: no verdict.
	short := tenant(80, 10, 6, 7, 0.2)
	short.Coverage = 0.3
	if got := DetectHAMi([]HAMiTenant{short}, price.DefaultPrices()); len(got) != 0 {
		t.Errorf("judged on 30%% of the window: %s", got[0].Summary)
	}
}
