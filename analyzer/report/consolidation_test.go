package report

import (
	"bytes"
	"strings"
	"testing"
)

func TestConsolidationSection(t *testing.T) {
	// 4 nodes of 8 today: A100s on 1 node keep it with 3 GPUs free; L4s on
	// 3 nodes need 22 GPUs, so 3 nodes with 2 free: no node goes.
	// The 5 GPUs freed on the nodes that stay are capacity for other
	// work: 3 A100s and 2 L4s at $3.43 and $0.80 an hour, $8,679.70 a
	// month ((3 × 3.43 + 2 × 0.80) × 730).
	c := &Consolidation{GPUsToday: 32, GPUsNeeded: 27, NodesToday: 4, NodesNeeded: 4, HeadroomGPUs: 5, MonthlySaving: 0, SavingKnown: true, ReplaySteps: 10080,
		CapacityFreedGPUs: 5, CapacityFreedMonthly: (3*3.43 + 2*0.80) * 730, Released: []string{"Pod/lab/nb"},
		PriceSources: []string{"embedded prices.yaml (2026-12)"},
		Pools: []ConsolidationPool{{Model: "A100-80GB", GPUsToday: 8, GPUsNeeded: 5, NodesToday: 1, NodesNeeded: 1, HeadroomGPUs: 3},
			{Model: "L4", GPUsToday: 24, GPUsNeeded: 22, NodesToday: 3, NodesNeeded: 3, HeadroomGPUs: 2}}}
	cases := []struct {
		name string
		c    *Consolidation
		want []string
		not  []string
	}{
		{"plan", c, []string{"CONSOLIDATION", "need 27 of the 32 GPUs, on 4 of today's 4 nodes, a saving of $0 a month (the freed nodes' price)",
			"5 GPUs, worth $8,680 a month, stay free on the nodes kept, capacity for other work", "The fleet after the advice (1 lanes", "10080 steps", "overcommits memory at 0", "Node prices: embedded prices.yaml (2026-12).",
			"A100-80GB 1 1 8 5 3"}, nil},
		{"no plan", &Consolidation{Unavailable: "no GPU pool to plan"}, []string{"No consolidation plan: no GPU pool to plan"}, []string{"stay free on the nodes kept"}},
		{"not asked for", nil, nil, []string{"CONSOLIDATION"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Currency: "USD", CostKnown: true, Consolidation: tc.c}
			var buf bytes.Buffer
			if err := Render(&buf, r, "table"); err != nil {
				t.Fatal(err)
			}
			// Words only: column widths are the table writer's business.
			out := strings.Join(strings.Fields(buf.String()), " ")
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("%q in:\n%s", w, out)
				}
			}
			// It follows the teams and comes before the recommendations.
			if tc.c != nil {
				teams, cons, recs := strings.Index(out, "TEAMS"), strings.Index(out, "CONSOLIDATION"), strings.Index(out, "TOP RECOMMENDATIONS")
				if !(teams < cons && cons < recs) {
					t.Errorf("sections out of order: teams %d, consolidation %d, recommendations %d", teams, cons, recs)
				}
			}
		})
	}
}
