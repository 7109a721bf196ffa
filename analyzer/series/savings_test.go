package series

import (
	"slices"
	"strings"
	"testing"
)

// TestSavings: the report's two savings by cluster, each the sum of the
// cluster's pools in the plan: eu frees a node of 2 L4s at $0.80 (1,168
// = 2 × 0.80 × 730) and leaves 2 A100s at $3.43 free on the node it keeps
// (5,007.80 = 2 × 3.43 × 730); us's pool without a price has its GPUs
// counted and no money series, which would be a part of it.
func TestSavings(t *testing.T) {
	usd := func(v float64) *float64 { return &v }
	plan := []Pool{
		{Cluster: "eu", Banked: usd(0), CapacityFreedGPUs: 2, CapacityFreed: usd(2 * 3.43 * 730)},
		{Cluster: "eu", Banked: usd(2 * 0.80 * 730), CapacityFreedGPUs: 0, CapacityFreed: usd(0)},
		{Cluster: "us", CapacityFreedGPUs: 3},
	}
	for _, tc := range []struct {
		name      string
		in        Input
		want, not []string
	}{
		{"a plan", Input{CostKnown: true, Pools: plan}, []string{
			`gpulens_fleet_monthly_savings_usd{cluster="eu",kind="banked"} 1168`,
			`gpulens_fleet_monthly_savings_usd{cluster="eu",kind="capacity_freed"} 5007.8`,
			`gpulens_fleet_capacity_freed_gpus{cluster="eu"} 2`,
			`gpulens_fleet_capacity_freed_gpus{cluster="us"} 3`,
		}, []string{`gpulens_fleet_monthly_savings_usd{cluster="us"`}},
		{"no price table", Input{Pools: plan}, []string{`gpulens_fleet_capacity_freed_gpus{cluster="eu"} 2`}, []string{"gpulens_fleet_monthly_savings_usd"}},
		{"no plan", Input{CostKnown: true}, nil, []string{"gpulens_fleet_"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			Build(tc.in).WritePrometheus(&b)
			lines := strings.Split(b.String(), "\n")
			for _, w := range tc.want {
				if !slices.ContainsFunc(lines, func(l string) bool { return sameSample(l, w) }) {
					t.Errorf("missing %s in\n%s", w, b.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("%q written:\n%s", n, b.String())
				}
			}
		})
	}
}
