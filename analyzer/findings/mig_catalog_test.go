package findings

import (
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/vocab"
)

// TestMIGGeometryPerModel: a slice is right-sized within its own model's
// profiles (A30 has 4 compute slices, not 7), and a slice of a model whose
// geometry is unknown gets its finding without a patch, saying why, never
// a patch to another GPU's profile or to time-slicing.
func TestMIGGeometryPerModel(t *testing.T) {
	const a30, gh200 = "NVIDIA A30", "NVIDIA GH200 144G HBM3e"
	tests := []struct {
		name    string
		a       fleet.Allocation
		g       fleet.GPU
		kind    vocab.Kind
		to      string // "" for no recommendation
		summary string
	}{
		// 2g.12gb is half an A30; at 20% p95 (10% of the GPU) with 3 GiB
		// it fits the 1g.6gb quarter.
		{"A30 2g.12gb", alloc("ocr", "GPU-a30", a30, "mig", "2g.12gb", 0.5, 0.1, 0.2, 3*GiB), gpu("GPU-a30", a30, "mig", 24*GiB),
			vocab.KindMIGOversized, "nvidia.com/mig-1g.6gb", "of its 1/4 compute"},
		{"unknown model's slice, idle", alloc("nb", "GPU-gh", gh200, "mig", "1g.18gb", 1.0/7, 0.001, 0.01, GiB), gpu("GPU-gh", gh200, "mig", 144*GiB),
			vocab.KindIdleAllocation, "", "no profile advice: the MIG geometry of NVIDIA GH200 144G HBM3e is not in the catalog"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Detect(result([]fleet.Allocation{tt.a}, []fleet.GPU{tt.g}), nil, criteria.DefaultConfig(), price.DefaultPrices())
			f := find(r, tt.kind)
			if f == nil {
				t.Fatalf("no %s in %s", tt.kind, summaries(r))
			}
			if tt.to == "" {
				// Releasing an idle slice needs no geometry; resizing does.
				if f.Recommendation != nil && (f.Recommendation.To != "" || f.Recommendation.Action != recommend.ActionRelease) {
					t.Errorf("recommendation %s to %s for a model without known geometry", f.Recommendation.Action, f.Recommendation.To)
				}
			} else if f.Recommendation == nil || f.Recommendation.To != tt.to {
				t.Errorf("recommendation %+v, want to %s", f.Recommendation, tt.to)
			}
			if !strings.Contains(f.Summary, tt.summary) {
				t.Errorf("summary %q lacks %q", f.Summary, tt.summary)
			}
		})
	}
}
