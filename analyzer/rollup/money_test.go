package rollup

import (
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// The fleet's summary and model rows, worked by hand. Node n1 has two
// H100s at $8: GPU-1 held all week by nlp at 25%, GPU-2 held by no pod
// and busy at 50% all the same (a tenant the data cannot name); node n2
// has 10 reported hours of a model without a price, held by web at 50%.
func TestBuildSumsTheFleet(t *testing.T) {
	gpu := func(node, uuid, model string, hours float64, steps int, util float64) fleet.GPU {
		g := fleet.GPU{Model: model, ReportedHours: hours, UtilizationSteps: steps, AvgUtilization: util}
		g.Node, g.UUID = node, uuid
		return g
	}
	on := func(x fleet.Allocation, node, uuid string) fleet.Allocation { x.Node, x.UUID = node, uuid; return x }
	end := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	cur := &fleet.Result{
		Window: fleet.Window{Start: end.Add(-168 * time.Hour), End: end, Step: time.Minute},
		GPUs:   []fleet.GPU{gpu("n1", "GPU-1", h100, 168, 10, 0.25), gpu("n1", "GPU-2", h100, 168, 10, 0.5), gpu("n2", "GPU-3", unknown, 10, 0, 0)},
		Allocations: []fleet.Allocation{
			on(alloc("", "nlp", h100, 168, 10, 0.25), "n1", "GPU-1"),
			on(alloc("", "web", unknown, 10, 5, 0.5), "n2", "GPU-3"),
		},
	}
	unnamed := func(g fleet.GPUKey) bool { return g.UUID == "GPU-2" }
	m := Build(Input{Current: cur, Team: team, UsedWithoutPod: unnamed}, prices(t))
	f := m.Fleet
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"allocated", f.AllocatedGPUHours, 168 + 10},
		{"used", f.UsedGPUHours, 42 + 5},
		{"idle", f.IdleGPUHours, 126 + 5},
		{"cost of the priced allocations", f.Cost, 168 * 8},
		{"waste", f.Waste, 126 * 8},
		{"capacity", f.CapacityGPUHours, 168 + 168 + 10},
		{"capacity cost", f.CapacityCost, 2 * 168 * 8},
		{"unallocated", f.UnallocatedGPUHours, 0},
		{"unattributed", f.UnattributedGPUHours, 168},
		{"unattributed cost", f.UnattributedCost, 168 * 8},
		{"utilization", f.AvgUtilization, (0.25*10 + 0.5*10) / 20},
		{"estimated waste", f.EstimatedWaste, 126 * 8},
	} {
		if !near(c.got, c.want) {
			t.Errorf("fleet %s = %g, want %g", c.what, c.got, c.want)
		}
	}
	if f.GPUs != 3 || f.CostKnown || f.CapacityCostKnown || !f.Unpriced.Partial || f.CapacityUnpriced.GPUs != 1 || f.CapacityUnpriced.GPUHours != 10 {
		t.Errorf("fleet %d GPUs, cost known %v/%v, unpriced %+v / %+v: want 3 GPUs, both unknown, the unpriced model's 10 h a part",
			f.GPUs, f.CostKnown, f.CapacityCostKnown, f.Unpriced, f.CapacityUnpriced)
	}
	if len(m.Models) != 2 || m.Models[0].Model != h100 || m.Models[0].GPUs != 2 || !near(m.Models[0].Cost, 2*168*8) ||
		m.Models[1].Model != unknown || m.Models[1].CostKnown || m.Models[1].PricePerHour != nil {
		t.Errorf("models %+v, want the H100s ($2,688) then the unpriced model", m.Models)
	}
	if len(m.Unpriced) != 1 || m.Unpriced[0] != unknown || m.Clusters != nil || m.Ledger == nil || len(m.Teams) != 2 {
		t.Errorf("unpriced %v, clusters %v, ledger %v, %d teams: want [%s], none (one cluster), a ledger, 2 teams", m.Unpriced, m.Clusters, m.Ledger != nil, len(m.Teams), unknown)
	}
}
