package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/ledger"
)

// cents reads "$1,234.56" as 123456.
func cents(t *testing.T, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(strings.NewReplacer("$", "", ",", "", ".", "").Replace(s), 10, 64)
	if err != nil {
		t.Fatalf("%q is not money to the cent: %v", s, err)
	}
	return v
}

// TestReconciliation: on both bases the section's parts add up to the
// cost of the GPUs to the cent, which is the summary's cost of the fleet;
// the teams' charges are the ledger's.
func TestReconciliation(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), fixturePrices(t))
	var s section
	for _, x := range r.sections() {
		if x.ID == "reconciliation" {
			s = x
		}
	}
	if len(s.Rows) != 2 {
		t.Fatalf("reconciliation rows %q, want one per basis", s.Rows)
	}
	for i, row := range s.Rows {
		if row[0] != string(ledger.Bases[i]) {
			t.Errorf("row %d is %q, want %s", i, row[0], ledger.Bases[i])
		}
		if got := cents(t, row[1]) + cents(t, row[2]) + cents(t, row[3]); got != cents(t, row[4]) {
			t.Errorf("%s: %s + %s + %s ≠ %s", row[0], row[1], row[2], row[3], row[4])
		}
		if want := r.moneyDigits(r.Cluster.CapacityCost, 2); row[4] != want {
			t.Errorf("%s: cost of the GPUs %s, the summary's %s", row[0], row[4], want)
		}
	}
	var alloc, usage float64
	for _, tm := range r.Teams {
		alloc += tm.AllocationCost
		usage += tm.UsageCost
		if tm.UsageCost > tm.AllocationCost+1e-9 {
			t.Errorf("team %s is charged more for what it used (%v) than for what it held (%v)", tm.Team, tm.UsageCost, tm.AllocationCost)
		}
	}
	if !near(alloc, r.Ledger.Allocation.Attributed.Cost) || !near(usage, r.Ledger.Usage.Attributed.Cost) {
		t.Errorf("teams charged %v and %v, the ledger %v and %v", alloc, usage, r.Ledger.Allocation.Attributed.Cost, r.Ledger.Usage.Attributed.Cost)
	}
}

// TestCostBasis: --cost-basis usage puts the teams' usage charges in the
// cost column, and says so; allocation keeps today's figures.
func TestCostBasis(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), fixturePrices(t))
	for _, basis := range ledger.Bases {
		r.CostBasis = basis
		s := r.teamSection()
		col := 7
		for i, tm := range r.Teams {
			want := r.moneyOf(tm.Cost, tm.Unpriced)
			if basis == ledger.Usage {
				want = r.moneyOf(tm.UsageCost, tm.Unpriced)
			}
			if got := s.Rows[i][col]; got != want {
				t.Errorf("%s basis, team %s: cost %s, want %s", basis, tm.Team, got, want)
			}
		}
		if basis == ledger.Usage && s.Header[col] != "Cost (usage basis)" {
			t.Errorf("usage basis: header %q", s.Header[col])
		}
		var md bytes.Buffer
		if err := Render(&md, r, "markdown"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "The teams' cost column is on the "+string(basis)+" basis") {
			t.Errorf("%s basis: the reconciliation does not say the teams' basis", basis)
		}
	}
}

// TestHAMiTenantWithoutAllocation: a HAMi tenant the exporter never saw
// is charged to its team, which the report then lists.
func TestHAMiTenantWithoutAllocation(t *testing.T) {
	w := fleet.Window{Start: weekEnd.Add(-24 * time.Hour), End: weekEnd, Step: time.Minute}
	res := &fleet.Result{Window: w, GPUs: []fleet.GPU{{GPUKey: fleet.GPUKey{Node: "n", UUID: "g"}, Model: "NVIDIA H100 80GB HBM3", ReportedHours: 24}},
		HAMi: []fleet.HAMiTenant{{Namespace: "hami-ns", Pod: "p", Container: "c", GPUUUID: "g", CoresPct: 50, DeviceBytes: 80 << 30, UtilP95: 0.25, Coverage: 1}}}
	r := buildReport(Input{Current: res, Previous: &fleet.Result{Window: w}}, fixturePrices(t))
	if len(r.Teams) != 1 || r.Teams[0].Team != "hami-ns" || r.Teams[0].AllocationCost <= 0 || !near(r.Teams[0].UsageCost, r.Teams[0].AllocationCost/2) {
		t.Errorf("teams %+v, want hami-ns charged for half the GPU and for using half of that", r.Teams)
	}
}
