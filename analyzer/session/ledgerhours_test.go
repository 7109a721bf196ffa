package session

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestReportLedgerByHour: a report's ledger is balanced hour by hour from
// the hours its one analysis folded (TestReportReadsTheWindowOnce holds it
// to no query more), in a store of two clusters, whose analyses are
// merged: every GPU's window is the sum of its clock hours, each balanced.
func TestReportLedgerByHour(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	dir, _ := twoClusters(t)
	s, err := Open(ctx, Config{DataDir: dir, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, NoKubernetes: "test", ClusterLabel: "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, _, err := s.Report(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Ledger.ByHour() {
		t.Fatal("the report's ledger was balanced over the window, not by hour: the analysis folded no hours")
	}
	clusters := map[string]bool{}
	for _, g := range r.Ledger.GPUs {
		clusters[g.Cluster] = true
		var hours float64
		for _, h := range g.Hourly {
			if h.End.Sub(h.Start) != time.Hour || h.Start.Minute() != 0 {
				t.Fatalf("GPU %s: a period from %s to %s, not a clock hour", g.UUID, h.Start, h.End)
			}
			hours += h.Hours
			for _, usage := range []bool{false, true} {
				sum := h.Allocation.Unallocated.GPUHours
				if usage {
					sum = h.Usage.Unallocated.GPUHours + h.Usage.Idle.GPUHours
				}
				for _, c := range h.Charges {
					if usage {
						sum += c.Usage.GPUHours
					} else {
						sum += c.Allocation.GPUHours
					}
				}
				if math.Abs(sum-h.Hours) > 1e-9*h.Hours {
					t.Errorf("GPU %s, hour %s (usage basis %v): charges + remainder %v GPU-h of %v", g.UUID, h.Start, usage, sum, h.Hours)
				}
			}
		}
		if math.Abs(hours-g.Hours) > 1e-9*max(1, g.Hours) {
			t.Errorf("GPU %s: its hours sum to %v, its window %v", g.UUID, hours, g.Hours)
		}
	}
	if len(clusters) < 2 {
		t.Errorf("GPUs of %d clusters, want the two", len(clusters))
	}
}
