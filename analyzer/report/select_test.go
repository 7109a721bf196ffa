package report

import (
	"slices"
	"testing"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/recommend"
)

// The default recommend output lists what someone can act on, with or
// without a patch, biggest sum first; --all adds the rest.
func TestSelectFindings(t *testing.T) {
	fs := []findings.Finding{
		{Kind: "insufficient-data", Severity: findings.Info, CostKnown: true},
		{Kind: "unallocated-capacity", Severity: findings.Warning, CostKnown: true, MonthlySavingsUSD: 2500,
			Recommendation: &recommend.Recommendation{Action: recommend.ActionScaleDown}},
		{Kind: "gpu-errors", Severity: findings.Critical, CostKnown: true},
		{Kind: "underused-gpu", Severity: findings.Info, CostKnown: true},
		{Kind: "mig-oversized", Severity: findings.Warning, CostKnown: true, MonthlySavingsUSD: 900,
			Recommendation: &recommend.Recommendation{Action: recommend.ActionMIGProfile, Patch: &recommend.Patch{}}},
		{Kind: "thermal-throttling", Severity: findings.Warning, CostKnown: true},
		{Kind: "training-on-shared-gpu", Severity: findings.Warning, CostKnown: true, MonthlySavingsUSD: -1200,
			Recommendation: &recommend.Recommendation{Action: recommend.ActionDedicatedGPU}},
	}
	kinds := func(all bool) []string {
		var out []string
		for _, f := range SelectFindings(fs, all) {
			out = append(out, string(f.Kind))
		}
		return out
	}
	want := []string{"unallocated-capacity", "mig-oversized", "gpu-errors", "thermal-throttling", "training-on-shared-gpu"}
	if got := kinds(false); !slices.Equal(got, want) {
		t.Errorf("default: %q, want %q", got, want)
	}
	wantAll := []string{"unallocated-capacity", "mig-oversized", "gpu-errors", "thermal-throttling", "insufficient-data", "underused-gpu", "training-on-shared-gpu"}
	if got := kinds(true); !slices.Equal(got, wantAll) {
		t.Errorf("--all: %q, want %q", got, wantAll)
	}
}
