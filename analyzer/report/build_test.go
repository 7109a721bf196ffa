package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/rollup"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*max(1, math.Abs(a), math.Abs(b)) }

// TestNumbersAddUp checks the three promises of the report: team totals
// are the cluster's, used never exceeds allocated, and costs are GPU-hours
// times the table's price. With and without teams, and without prices.
func TestNumbersAddUp(t *testing.T) {
	prices := fixturePrices(t)
	tests := []struct {
		name      string
		inv       *inventory.Inventory
		prices    *price.Prices
		wantTeams []string
	}{
		{name: "team labels", inv: teamsInventory(), prices: prices, wantTeams: []string{"ml", "serving", "vision"}},
		{name: "namespaces without a cluster", inv: nil, prices: prices, wantTeams: []string{"training", "research", "vision", "inference", "search"}},
		{name: "no prices", inv: teamsInventory(), prices: nil, wantTeams: []string{"ml", "serving", "vision"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fixtureReport(t, tt.inv, tt.prices)
			var got []string
			var sum rollup.Hours
			for _, team := range r.Teams {
				got = append(got, team.Team)
				sum.Sum(team.Hours)
				if team.UsedGPUHours > team.AllocatedGPUHours+1e-9 {
					t.Errorf("%s used %g > allocated %g", team.Team, team.UsedGPUHours, team.AllocatedGPUHours)
				}
				if !near(team.UsedGPUHours+team.IdleGPUHours+team.UnmeasuredGPUHours, team.AllocatedGPUHours) {
					t.Errorf("%s: used+idle+unmeasured %g != allocated %g", team.Team, team.UsedGPUHours+team.IdleGPUHours+team.UnmeasuredGPUHours, team.AllocatedGPUHours)
				}
			}
			if len(got) != len(tt.wantTeams) {
				t.Fatalf("teams %v, want %v", got, tt.wantTeams)
			}
			for i := range got {
				if got[i] != tt.wantTeams[i] {
					t.Fatalf("teams %v, want %v (sorted by allocated GPU-hours)", got, tt.wantTeams)
				}
			}
			c := r.Cluster
			for _, p := range [][3]any{
				{"allocated", sum.AllocatedGPUHours, c.AllocatedGPUHours}, {"used", sum.UsedGPUHours, c.UsedGPUHours},
				{"idle", sum.IdleGPUHours, c.IdleGPUHours}, {"unmeasured", sum.UnmeasuredGPUHours, c.UnmeasuredGPUHours},
				{"cost", sum.Cost, c.Cost}, {"waste", sum.Waste, c.Waste},
			} {
				if !near(p[1].(float64), p[2].(float64)) {
					t.Errorf("teams' %s %g != cluster's %g", p[0], p[1], p[2])
				}
			}
			if !near(c.AllocatedGPUHours+c.UnallocatedGPUHours, c.CapacityGPUHours) {
				t.Errorf("allocated %g + unallocated %g != capacity %g", c.AllocatedGPUHours, c.UnallocatedGPUHours, c.CapacityGPUHours)
			}
			if c.UsedGPUHours > c.AllocatedGPUHours {
				t.Errorf("cluster used %g > allocated %g", c.UsedGPUHours, c.AllocatedGPUHours)
			}
			// Costs from the price table, per model.
			var fleetCost, fleetHours float64
			for _, m := range r.Fleet {
				fleetHours += m.CapacityGPUHours
				fleetCost += m.Cost
				if tt.prices == nil {
					if m.PricePerHour != nil || m.Cost != 0 {
						t.Errorf("%s priced without a table", m.Model)
					}
					continue
				}
				want, err := tt.prices.PerHour(m.Model)
				if err != nil || m.PricePerHour == nil || *m.PricePerHour != want || !near(m.Cost, m.CapacityGPUHours*want) {
					t.Errorf("%s: cost %g at %v, want %g GPU-h × %g", m.Model, m.Cost, m.PricePerHour, m.CapacityGPUHours, want)
				}
			}
			if !near(fleetHours, c.CapacityGPUHours) || !near(fleetCost, c.CapacityCost) || !near(c.Cost+c.UnallocatedCost, c.CapacityCost) {
				t.Errorf("fleet %g GPU-h $%g; cluster capacity %g GPU-h $%g = allocated $%g + unallocated $%g",
					fleetHours, fleetCost, c.CapacityGPUHours, c.CapacityCost, c.Cost, c.UnallocatedCost)
			}
			if !near(c.EstimatedWaste, c.Waste+c.UnallocatedCost) {
				t.Errorf("estimated waste %g != idle %g + unallocated %g", c.EstimatedWaste, c.Waste, c.UnallocatedCost)
			}
		})
	}
}

// TestTeamFigures pins the figures of the fixture's teams that the rules
// decide: capping, unmeasured hours, and the week-over-week change.
func TestTeamFigures(t *testing.T) {
	r := fixtureReport(t, nil, fixturePrices(t))
	by := map[string]rollup.Team{}
	for _, team := range r.Teams {
		by[team.Team] = team
	}
	// chat-aaaaa averages 1.1 of its quarter L4 and is capped at 1;
	// chat-bbbbb uses 0.3 of its quarter: 42+12.6 of 84 GPU-h.
	if inf := by["inference"]; !near(inf.AllocatedGPUHours, 84) || !near(inf.UsedGPUHours, 42+12.6) {
		t.Errorf("inference allocated %g used %g, want 84 and 54.6", inf.AllocatedGPUHours, inf.UsedGPUHours)
	}
	// embed-0 has no utilization: unmeasured, not idle, no efficiency.
	if s := by["search"]; !near(s.UnmeasuredGPUHours, 42) || s.IdleGPUHours != 0 || s.Efficiency != nil || s.Waste != 0 {
		t.Errorf("search %+v, want 42 unmeasured GPU-h, no idle, no efficiency", s.Hours)
	}
	// research: bob used 60% of an H100 last week, alice 2% this week.
	res := by["research"]
	if res.Previous == nil || res.Change == nil || !near(*res.Change.EfficiencyPoints, -58) || !near(res.Change.AllocatedGPUHours, 0) {
		t.Errorf("research change %+v, want -58 pts on the same hours", res.Change)
	}
	// finetune ran 84 h on an A100 at $3: cost 252.
	if tr := by["training"]; !near(tr.Cost, 168*6+84*3) {
		t.Errorf("training cost %g, want %g", tr.Cost, 168*6.0+84*3)
	}
}

// TestCSVAgreesWithJSON parses both formats back and compares them.
func TestCSVAgreesWithJSON(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), fixturePrices(t))
	var jb, cb bytes.Buffer
	if err := Render(&jb, r, "json"); err != nil {
		t.Fatal(err)
	}
	if err := Render(&cb, r, "csv"); err != nil {
		t.Fatal(err)
	}
	var parsed Report
	if err := json.Unmarshal(jb.Bytes(), &parsed); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cb).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(parsed.Teams)+3 {
		t.Fatalf("%d CSV rows for %d teams, want header + teams + unallocated + cluster", len(rows), len(parsed.Teams))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	check := func(row []string, name string, u rollup.Hours, prev *rollup.Hours) {
		t.Helper()
		get := func(c string) float64 {
			v, err := strconv.ParseFloat(row[col[c]], 64)
			if err != nil {
				t.Fatalf("%s %s: %v", name, c, err)
			}
			return v
		}
		for c, want := range map[string]float64{"allocated_gpu_hours": u.AllocatedGPUHours, "used_gpu_hours": u.UsedGPUHours,
			"idle_gpu_hours": u.IdleGPUHours, "unmeasured_gpu_hours": u.UnmeasuredGPUHours, "cost": u.Cost, "waste": u.Waste,
			"previous_allocated_gpu_hours": prev.AllocatedGPUHours, "previous_cost": prev.Cost} {
			if got := get(c); got != want {
				t.Errorf("%s %s: CSV %v, JSON %v", name, c, got, want)
			}
		}
		if u.Efficiency != nil && get("efficiency") != *u.Efficiency {
			t.Errorf("%s efficiency: CSV %v, JSON %v", name, get("efficiency"), *u.Efficiency)
		}
	}
	for i, team := range parsed.Teams {
		row := rows[i+1]
		if row[col["scope"]] != "team" || row[col["team"]] != team.Team {
			t.Fatalf("row %d is %v, want team %s", i+1, row, team.Team)
		}
		check(row, team.Team, team.Hours, team.Previous)
	}
	free := rows[len(rows)-2]
	if free[col["scope"]] != "unallocated" {
		t.Fatalf("row %v, want the unallocated capacity", free)
	}
	last := rows[len(rows)-1]
	if last[col["scope"]] != "cluster" {
		t.Fatalf("last row %v, want the cluster", last)
	}
	// The cluster row is every row above it summed: the teams and the
	// free GPUs, at what the fleet cost (the JSON's capacity cost).
	c := parsed.Cluster
	whole := c.Hours
	whole.IdleGPUHours += c.UnallocatedGPUHours
	whole.Cost, whole.Waste = c.CapacityCost, c.EstimatedWaste
	check(last, "cluster", whole, c.Previous)
	var teamCost float64
	for _, team := range parsed.Teams {
		teamCost += team.Cost
	}
	freeCost, _ := strconv.ParseFloat(free[col["cost"]], 64)
	if !near(teamCost+freeCost, c.CapacityCost) || c.UnallocatedCost == 0 {
		t.Errorf("teams $%g + unallocated $%g, want the fleet's $%g (unallocated $%g)", teamCost, freeCost, c.CapacityCost, c.UnallocatedCost)
	}
}
