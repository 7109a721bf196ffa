package rollup

import (
	"math"
	"testing"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/price"
)

const (
	h100    = "NVIDIA H100 80GB HBM3" // H100-80GB in the catalog
	proto   = "NVIDIA Prototype Z9"   // in no catalog either
	unknown = "NVIDIA Unobtainium X1" // in no catalog
)

// prices is the default table with $8 an H100-hour.
func prices(t *testing.T) *price.Prices {
	t.Helper()
	p, err := price.DefaultPrices().Override([]byte("prices: {H100-80GB: 8.00}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func alloc(cluster, ns, model string, hours float64, steps int, util float64) fleet.Allocation {
	x := fleet.Allocation{Model: model, AllocatedGPUHours: hours, UtilizationSteps: steps, AvgUtilization: util}
	x.Cluster, x.Namespace = cluster, ns
	return x
}

// team names nlp's and vision's team ml; every other namespace is its
// own team.
func team(_, ns string) string {
	if ns == "nlp" || ns == "vision" {
		return "ml"
	}
	return ns
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The week: ml holds an H100 all week at 25% (nlp) and half an H100's
// week unmeasured (vision); web holds 10 GPU-hours of a model without a
// price at 50%. The week before, nlp held 100 H100-hours at 50% and a
// namespace gone since held some too. Every figure is worked by hand.
func week() (cur, prev *fleet.Result) {
	cur = &fleet.Result{Allocations: []fleet.Allocation{
		alloc("", "nlp", h100, 168, 10, 0.25),
		alloc("", "vision", h100, 84, 0, 0),
		alloc("", "web", unknown, 10, 5, 0.5),
	}}
	prev = &fleet.Result{
		GPUs: []fleet.GPU{{GPUKey: fleet.GPUKey{Node: "n1", UUID: "GPU-1"}, Model: h100}},
		Allocations: []fleet.Allocation{
			alloc("", "nlp", h100, 100, 10, 0.5),
			alloc("", "gone", h100, 50, 10, 1),
		}}
	return cur, prev
}

func TestTeams(t *testing.T) {
	cur, prev := week()
	got := Teams(Input{Current: cur, Previous: prev, Team: team}, NewPricer(prices(t)))
	if len(got) != 2 || got[0].Team != "ml" || got[1].Team != "web" {
		t.Fatalf("teams %+v, want ml then web (most allocated first), and nothing of the gone namespace", got)
	}
	ml, web := got[0], got[1]
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"ml allocated", ml.AllocatedGPUHours, 168 + 84},
		{"ml used", ml.UsedGPUHours, 168 * 0.25},
		{"ml idle", ml.IdleGPUHours, 168 * 0.75},
		{"ml unmeasured", ml.UnmeasuredGPUHours, 84},
		{"ml efficiency", *ml.Efficiency, 42.0 / 168},
		{"ml cost", ml.Cost, (168 + 84) * 8},
		{"ml waste", ml.Waste, 126 * 8},
		{"ml previous allocated", ml.Previous.AllocatedGPUHours, 100},
		{"ml previous cost", ml.Previous.Cost, 800},
		{"ml change allocated", ml.Change.AllocatedGPUHours, 252 - 100},
		{"ml change used", ml.Change.UsedGPUHours, 42 - 50},
		{"ml change cost", ml.Change.Cost, 2016 - 800},
		{"ml change waste", ml.Change.Waste, 1008 - 400},
		{"ml change efficiency points", *ml.Change.EfficiencyPoints, 25 - 50},
		{"web used", web.UsedGPUHours, 5},
		{"web unpriced hours", web.Unpriced.GPUHours, 10},
		{"web cost", web.Cost, 0},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %g, want %g", c.what, c.got, c.want)
		}
	}
	if ml.Allocations != 2 || len(ml.Namespaces) != 2 || ml.Namespaces[0] != "nlp" || ml.Namespaces[1] != "vision" {
		t.Errorf("ml: %d allocations of %v, want 2 of [nlp vision]", ml.Allocations, ml.Namespaces)
	}
	if !ml.CostKnown || !ml.Change.CostKnown {
		t.Error("ml's money is unknown; every hour of it had a price")
	}
	// web's hours have no price: its cost is unknown, not $0, and so is
	// its change; last week it held nothing, a known zero.
	if web.CostKnown || web.Unpriced.Partial || len(web.Unpriced.Models) != 1 || web.Unpriced.Models[0] != unknown {
		t.Errorf("web: cost known %v, unpriced %+v; want unknown, wholly, of %s", web.CostKnown, web.Unpriced, unknown)
	}
	if web.Previous == nil || web.Previous.AllocatedGPUHours != 0 || !web.Previous.CostKnown || web.Change.CostKnown {
		t.Errorf("web previous %+v change %+v: want a known zero last week and an unknown change in cost", web.Previous, web.Change)
	}
}

// Without a comparable previous window no team has previous figures or
// a change: a change against a few minutes' data would read as
// thousands of percent.
func TestTeamsWithoutPrevious(t *testing.T) {
	cur, _ := week()
	for _, tm := range Teams(Input{Current: cur, Team: team}, NewPricer(prices(t))) {
		if tm.Previous != nil || tm.Change != nil {
			t.Errorf("%s: previous %+v change %+v, want none", tm.Team, tm.Previous, tm.Change)
		}
	}
}

// Without a price table no figure has money, and none reads as $0 known.
func TestTeamsWithoutPrices(t *testing.T) {
	cur, prev := week()
	for _, tm := range Teams(Input{Current: cur, Previous: prev, Team: team}, NewPricer(nil)) {
		if tm.CostKnown || tm.Cost != 0 || tm.Previous.CostKnown || tm.Change.CostKnown {
			t.Errorf("%s: cost %g known %v, want unknown", tm.Team, tm.Cost, tm.CostKnown)
		}
	}
}

// Two clusters' ml are two teams, each named by its own cluster.
func TestTeamsOfTwoClusters(t *testing.T) {
	cur := &fleet.Result{Allocations: []fleet.Allocation{
		alloc("eu", "nlp", h100, 10, 1, 1), alloc("us", "nlp", h100, 20, 1, 1), alloc("us", "vision", h100, 5, 1, 1),
	}}
	var asked []string
	teamOf := func(cluster, ns string) string { asked = append(asked, cluster+"/"+ns); return team(cluster, ns) }
	got := Teams(Input{Current: cur, Team: teamOf}, NewPricer(prices(t)))
	if len(got) != 2 || got[0].Cluster != "us" || got[0].AllocatedGPUHours != 25 || got[1].Cluster != "eu" || got[1].AllocatedGPUHours != 10 {
		t.Errorf("teams %+v, want us/ml with 25 GPU-h then eu/ml with 10", got)
	}
	if len(asked) == 0 || asked[0] != "eu/nlp" {
		t.Errorf("team asked for %v, want each namespace with its cluster", asked)
	}
}

// The ledger's charges are the teams' AllocationCost and UsageCost, and
// each tenant of the ledger is given its team. A HAMi tenant holds a share
// of a GPU with no allocation series (HAMi's vGPU pods are seen through
// its own series): its team exists only in the ledger, and is added,
// with the hours it held unpriced where its GPU has no price.
func TestTeamsChargedFromTheLedger(t *testing.T) {
	cur, prev := week()
	charge := func(ns string, held, heldCost, used, usedCost float64) ledger.Tenant {
		return ledger.Tenant{Namespace: ns, Charge: ledger.Charge{
			Allocation: ledger.Amount{GPUHours: held, Cost: heldCost}, Usage: ledger.Amount{GPUHours: used, Cost: usedCost}}}
	}
	l := &ledger.Ledger{GPUs: []ledger.GPU{
		{UUID: "GPU-1", Model: h100, PriceKnown: true, Tenants: []ledger.Tenant{
			charge("nlp", 168, 1344, 42, 336), charge("vision", 84, 672, 84, 672)}},
		{UUID: "GPU-2", Model: proto, Tenants: []ledger.Tenant{charge("hami-only", 12, 0, 12, 0)}},
	}}
	got := Teams(Input{Current: cur, Previous: prev, Team: team, Ledger: l}, NewPricer(prices(t)))
	if len(got) != 3 || got[0].Team != "ml" || got[1].Team != "web" || got[2].Team != "hami-only" {
		t.Fatalf("teams %+v, want ml, web, then hami-only (no allocated hours)", got)
	}
	if ml := got[0]; !near(ml.AllocationCost, 1344+672) || !near(ml.UsageCost, 336+672) {
		t.Errorf("ml charged %g allocation, %g usage; want 2016 and 1008", ml.AllocationCost, ml.UsageCost)
	}
	h := got[2]
	if h.Allocations != 0 || h.CostKnown || h.Unpriced == nil || h.Unpriced.GPUHours != 12 || h.Unpriced.Models[0] != proto {
		t.Errorf("hami-only %+v, want no allocations, 12 unpriced GPU-h of %s", h, proto)
	}
	for _, g := range l.GPUs {
		for _, x := range g.Tenants {
			if want := team("", x.Namespace); x.Team != want {
				t.Errorf("tenant of %s named team %q, want %q", x.Namespace, x.Team, want)
			}
		}
	}
}

// The pricer names the models it found without a price, once each.
func TestPricerMissing(t *testing.T) {
	pr := NewPricer(prices(t))
	for _, m := range []string{h100, unknown, proto, unknown} {
		pr.PerHour(m)
	}
	if got := pr.Missing(); len(got) != 2 || got[0] != proto || got[1] != unknown {
		t.Errorf("missing %v, want [%s %s]", got, proto, unknown)
	}
}
