package findings

import (
	"math"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/vocab"
)

// TestIdleSmallestSliceSavesItsCost: an idle workload on the smallest MIG
// slice cannot be made smaller; releasing it saves all it costs, not $0.
func TestIdleSmallestSliceSavesItsCost(t *testing.T) {
	prices := price.DefaultPrices()
	r := Detect(result([]fleet.Allocation{alloc("nb", "GPU-1", h100, "mig", "1g.10gb", 1.0/7, 0.001, 0.01, 2*GiB)},
		[]fleet.GPU{gpu("GPU-1", h100, "mig", 80*GiB)}), nil, criteria.DefaultConfig(), prices)
	f := find(r, vocab.KindIdleAllocation)
	if f == nil {
		t.Fatalf("no idle allocation in %s", summaries(r))
	}
	price, _ := prices.PerHour(h100)
	want := 730 * price / 7 // a seventh of an H100, all month
	if f.Recommendation == nil || f.Recommendation.Action != recommend.ActionRelease {
		t.Fatalf("recommendation %+v, want a release", f.Recommendation)
	}
	if !f.CostKnown || math.Abs(f.MonthlySavingsUSD-want) > 0.01 || math.Abs(f.MonthlyCostUSD-want) > 0.01 {
		t.Errorf("cost %.2f, savings %.2f; want both %.2f (1/7 × $%.3f × 730 h)", f.MonthlyCostUSD, f.MonthlySavingsUSD, want, price)
	}
}

// TestUnallocatedAdvisesWhatTheAutoscalerCanDo: a scale-down only where
// every GPU of the node is free; beside held GPUs, moving pods, for $0.
func TestUnallocatedAdvisesWhatTheAutoscalerCanDo(t *testing.T) {
	free := func(uuid, node string) fleet.GPU {
		g := gpu(uuid, h100, "none", 80*GiB)
		g.Node, g.AllocatedHours, g.UnallocatedHours = node, 0, 168
		return g
	}
	held := gpu("GPU-held", h100, "none", 80*GiB) // on node-1, held by nb
	a := alloc("trainer", "GPU-held", h100, "none", "", 1, 0.9, 0.95, 60*GiB)
	r := Detect(result([]fleet.Allocation{a}, []fleet.GPU{free("GPU-a", "node-1"), held, free("GPU-b", "node-2"), free("GPU-c", "node-2")}),
		nil, criteria.DefaultConfig(), price.DefaultPrices())
	got := map[string]*Finding{}
	for i, f := range r.Findings {
		if f.Kind == vocab.KindUnallocated {
			got[f.GPUUUID] = &r.Findings[i]
		}
	}
	if f := got["GPU-a"]; f == nil || f.Recommendation.Action != recommend.ActionConsolidate || f.MonthlySavingsUSD != 0 ||
		!strings.Contains(f.Summary, "move team-a/trainer (Pod, 1 GPU) so that a node empties") || f.MonthlyCostUSD <= 0 {
		t.Errorf("GPU-a beside a held GPU: %+v, want a consolidation naming team-a/trainer, its cost and $0 savings", f)
	}
	for _, u := range []string{"GPU-b", "GPU-c"} {
		if f := got[u]; f == nil || f.Recommendation.Action != recommend.ActionScaleDown || f.MonthlySavingsUSD != f.MonthlyCostUSD || f.MonthlySavingsUSD <= 0 {
			t.Errorf("%s on an empty node: %+v, want a scale-down saving its cost", u, f)
		}
	}
}
