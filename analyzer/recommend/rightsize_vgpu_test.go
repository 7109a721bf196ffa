package recommend

import (
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
)

// TestVGPUNoMIGAdvice: an idle or underused workload on a vGPU is never
// told to take a MIG slice, and says why.
func TestVGPUNoMIGAdvice(t *testing.T) {
	pol := criteria.DefaultConfig().Recommend
	for _, model := range []string{"GRID A100-40C", "NVIDIA H100-20C", "NVIDIA A100D-80C"} {
		u := Usage{Model: model, P95Utilization: 0.01, P99MemoryBytes: 1 << 30, DeviceMemoryBytes: 20e9}
		if _, ok := FitMIG(u, pol); ok {
			t.Errorf("%s: FitMIG found a profile", model)
		}
		if r := RightSize(u, pol); r != nil {
			if r.Action == ActionMIGProfile {
				t.Errorf("%s: MIG advice %+v", model, r)
			}
			if !strings.Contains(strings.Join(r.Notes, " "), "no MIG advice") {
				t.Errorf("%s: notes %q do not say why there is no MIG advice", model, r.Notes)
			}
		}
		if why := Unsizable(u); !strings.Contains(why, "vGPU") {
			t.Errorf("%s: Unsizable %q does not say it is a vGPU", model, why)
		}
	}
	// The whole board still gets its MIG advice.
	if _, ok := FitMIG(Usage{Model: "NVIDIA A100-PCIE-40GB", P95Utilization: 0.01, P99MemoryBytes: 1 << 30}, pol); !ok {
		t.Error("a whole A100 got no MIG profile")
	}
}
