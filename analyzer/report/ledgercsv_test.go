package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
)

// TestLedgerCSVHourly: the fixture week analysed as a report analyses it
// (its passes folding the hours, Lanes) gives an hourly ledger: -o
// ledger-csv has a row per GPU, hour and tenant, whose charges add up for
// every GPU and hour to its price × the hour's reported part, and over all
// rows to the fleet's cost, on both bases; and on the allocation basis the
// hours add up to the window ledger's charges (a share × the time held is
// the same summed by hour), where the usage basis may move (each hour is
// charged on its own utilisation: min(1, u) of an hour's average is not
// the window's).
func TestLedgerCSVHourly(t *testing.T) {
	inv, prices := teamsInventory(), fixturePrices(t)
	src, _ := pipelinetest.Open(t, "../pipeline/testdata/fleet.yaml")
	a, err := pipeline.Run(context.Background(), pipeline.Options{Source: src, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd,
		Inventory: inv, Prices: prices, Lanes: true})
	if err != nil {
		t.Fatal(err)
	}
	r := buildReport(Input{Schema: a.Schema.Name(), Current: a.Current, Previous: a.Previous, Comparable: a.Comparable,
		Findings: a.Findings, Team: func(_, ns string) string { return inv.Team(ns) }, Notes: a.Notes}, prices)
	window := fixtureReport(t, inv, prices)
	if !r.Ledger.ByHour() || window.Ledger.ByHour() {
		t.Fatalf("balanced by hour: %v with the hours folded, %v without; want true and false", r.Ledger.ByHour(), window.Ledger.ByHour())
	}
	for _, s := range r.sections() {
		if s.ID == "reconciliation" && !strings.Contains(s.Intro, "For every GPU and every hour") {
			t.Errorf("the reconciliation says %q, not that it balances every hour", s.Intro)
		}
	}

	var buf bytes.Buffer
	if err := Render(&buf, r, "ledger-csv"); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	f := func(row []string, c string) float64 {
		v, err := strconv.ParseFloat(row[col[c]], 64)
		if err != nil {
			t.Fatalf("%s %q: %v", c, row[col[c]], err)
		}
		return v
	}
	type gpuHour struct{ gpu, start string }
	hourCost := map[gpuHour]float64{}
	sums := map[gpuHour][2]float64{}
	var total [2]float64
	for _, row := range rows[1:] {
		k := gpuHour{row[col["gpu_uuid"]], row[col["window_start"]]}
		start, err := time.Parse(time.RFC3339, k.start)
		if err != nil {
			t.Fatal(err)
		}
		end, _ := time.Parse(time.RFC3339, row[col["window_end"]])
		if end.Sub(start) != time.Hour || start.Minute() != 0 {
			t.Fatalf("row %q is not of one clock hour", row)
		}
		price := 0.0
		for _, g := range r.Ledger.GPUs {
			if g.UUID == k.gpu {
				price = g.PricePerHour
			}
		}
		hourCost[k] = f(row, "reported_hours") * price
		s := sums[k]
		s[0] += f(row, "allocation_cost")
		s[1] += f(row, "usage_cost")
		sums[k] = s
		total[0] += f(row, "allocation_cost")
		total[1] += f(row, "usage_cost")
	}
	if len(hourCost) < 7*24 {
		t.Fatalf("%d GPU-hours in the ledger, want a week's at least", len(hourCost))
	}
	for k, s := range sums {
		for i, b := range ledger.Bases {
			if math.Abs(s[i]-hourCost[k]) > 1e-9*max(1, hourCost[k]) {
				t.Errorf("GPU %s, hour %s, %s basis: rows add up to %v, the hour costs %v", k.gpu, k.start, b, s[i], hourCost[k])
			}
		}
	}
	for i, b := range ledger.Bases {
		tot := r.Ledger.Totals(b)
		if !near(total[i], tot.Cost.Cost) || !near(tot.Attributed.Cost+tot.Idle.Cost+tot.Unallocated.Cost, tot.Cost.Cost) {
			t.Errorf("%s basis: the rows add up to %v, the fleet costs %v", b, total[i], tot.Cost.Cost)
		}
		w := window.Ledger.Totals(b)
		if !near(tot.Cost.Cost, w.Cost.Cost) {
			t.Errorf("%s basis: the hours cost %v, the window %v", b, tot.Cost.Cost, w.Cost.Cost)
		}
		t.Logf("%s basis: hourly attributed %.2f idle %.2f unallocated %.2f of %.2f; window ledger %.2f, %.2f, %.2f",
			b, tot.Attributed.Cost, tot.Idle.Cost, tot.Unallocated.Cost, tot.Cost.Cost, w.Attributed.Cost, w.Idle.Cost, w.Unallocated.Cost)
	}
	if a, w := r.Ledger.Allocation.Attributed.Cost, window.Ledger.Allocation.Attributed.Cost; math.Abs(a-w) > 1e-6*w {
		t.Errorf("allocation basis: the hours charge %v, the window %v", a, w)
	}
}
