package session

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestReportRendersTheAnalysisLedger (issue 55, "money built once"): the
// report's ledger is the one the analysis built, not a second charging
// of the same window, and it charges every GPU the analysis read; so are
// the teams rolled up from it.
func TestReportRendersTheAnalysisLedger(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	dir, _ := twoClusters(t)
	s, err := Open(ctx, Config{DataDir: dir, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, NoKubernetes: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, a, err := s.Report(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Money == nil || r.Ledger != a.Money.Ledger {
		t.Fatalf("the report's ledger %p, the analysis's %p: want the analysis's, built once", r.Ledger, a.Money.Ledger)
	}
	if len(a.Money.Ledger.GPUs) != len(a.Current.GPUs) || len(a.Current.GPUs) == 0 {
		t.Errorf("the ledger charges %d GPUs of the %d the analysis read", len(a.Money.Ledger.GPUs), len(a.Current.GPUs))
	}
	// The teams are the analysis's too, charged from that ledger: the
	// report renders them, and every tenant of the ledger is named with
	// its team, none left for the report to fill in.
	if len(a.Money.Teams) == 0 || len(r.Teams) != len(a.Money.Teams) || &r.Teams[0] != &a.Money.Teams[0] {
		t.Fatalf("the report's %d teams are not the analysis's %d, built once", len(r.Teams), len(a.Money.Teams))
	}
	var charged float64
	for _, tm := range a.Money.Teams {
		charged += tm.AllocationCost
	}
	var tenants float64
	for _, g := range a.Money.Ledger.GPUs {
		for _, x := range g.Tenants {
			tenants += x.Allocation.Cost
			if x.Team == "" {
				t.Errorf("a tenant of %s on %s has no team in the analysis's ledger", x.Namespace, g.UUID)
			}
		}
	}
	if math.Abs(charged-tenants) > 1e-6 || tenants == 0 {
		t.Errorf("the teams are charged $%.2f, the ledger's tenants $%.2f: want the same, not 0", charged, tenants)
	}
}
