package session

import (
	"context"
	"testing"
	"time"
)

// TestReportRendersTheAnalysisLedger (issue 55, "money built once"): the
// report's ledger is the one the analysis built, not a second charging
// of the same window, and it charges every GPU the analysis read.
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
	if a.Ledger == nil || r.Ledger != a.Ledger {
		t.Fatalf("the report's ledger %p, the analysis's %p: want the analysis's, built once", r.Ledger, a.Ledger)
	}
	if len(a.Ledger.GPUs) != len(a.Current.GPUs) || len(a.Current.GPUs) == 0 {
		t.Errorf("the ledger charges %d GPUs of the %d the analysis read", len(a.Ledger.GPUs), len(a.Current.GPUs))
	}
}
