package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// reclaimReport is a report of one week with a reclaim preview: one
// Deployment reclaimed at $1,825 a month, one whose model has no price,
// and the reclaimer's record of 3 workloads, 192 GPU-hours and $480.
func reclaimReport() *Report {
	r := &Report{Currency: "USD", CostKnown: true, Window: Window{Hours: 168}}
	r.ReclaimPreview = &ReclaimPreview{Note: "Every namespace treated as opted in.",
		Workloads: []ReclaimWorkload{
			{Namespace: "team-a", Kind: "Deployment", Name: "nb", Action: ReclaimActionReclaim, Reason: "idle", GPUs: 1, MonthlyCost: 1825, CostKnown: true},
			{Namespace: "team-a", Kind: "Deployment", Name: "nb2", Action: ReclaimActionReclaim, Reason: "idle", GPUs: 2},
		},
		Reclaim:   &ReclaimTotal{Workloads: 2, GPUs: 3, MonthlyCost: 1825},
		Reclaimed: &ReclaimedWindow{Workloads: 3, GPUHours: 192, USD: 480}}
	return r
}

// TestReclaimSectionInEveryFormat: the section is in every format, an
// unpriced figure reads "unknown" in text and null in JSON and YAML (not
// 0), and the week's record is its own line.
func TestReclaimSectionInEveryFormat(t *testing.T) {
	r := reclaimReport()
	for format, want := range map[string][]string{
		"table":    {"RECLAIM (DRY RUN)", "Deployment/nb2", "unknown", "Would reclaim 2 workloads on 3 GPUs or MIG slices, unknown a month.", "Reclaimed this week: 3 workloads, 192.0 GPU-hours, $480."},
		"markdown": {"## Reclaim (dry run)", "| team-a | Deployment/nb | reclaim | 1 | $1,825 | idle |", "Reclaimed this week: 3 workloads"},
		"html":     {"Reclaim (dry run)", "Deployment/nb2", "Reclaimed this week: 3 workloads"},
		"yaml":     {"reclaim_preview:", "monthly_cost: null", "gpu_hours: 192"},
	} {
		var buf bytes.Buffer
		if err := Render(&buf, r, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		// The table wraps prose at 120 columns under an indent: a
		// sentence is looked for with its lines joined.
		text := strings.Join(strings.Fields(buf.String()), " ")
		for _, w := range want {
			if !strings.Contains(buf.String(), w) && !strings.Contains(text, w) {
				t.Errorf("%s lacks %q:\n%s", format, w, buf.String())
			}
		}
	}
	var buf bytes.Buffer
	if err := Render(&buf, r, "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Preview struct {
			Workloads []struct {
				MonthlyCost *float64 `json:"monthly_cost"`
			} `json:"workloads"`
			Reclaim struct {
				MonthlyCost *float64 `json:"monthly_cost"`
			} `json:"reclaim"`
		} `json:"reclaim_preview"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	w := doc.Preview.Workloads
	if len(w) != 2 || w[0].MonthlyCost == nil || *w[0].MonthlyCost != 1825 || w[1].MonthlyCost != nil || doc.Preview.Reclaim.MonthlyCost != nil {
		t.Errorf("JSON money: %s; want 1825, then null for the unpriced workload and its total", buf.String())
	}
}

// TestReclaimNotRunIsNotZero: without the reclaimer's series the section
// says it did not run, and JSON has no record, not a zero one.
func TestReclaimNotRunIsNotZero(t *testing.T) {
	r := reclaimReport()
	r.ReclaimPreview.Reclaimed = nil
	var buf bytes.Buffer
	if err := Render(&buf, r, "table"); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(buf.String()), " ")
	if !strings.Contains(text, ReclaimDidNotRun) || strings.Contains(text, "Reclaimed this week") {
		t.Errorf("want %q and no record:\n%s", ReclaimDidNotRun, buf.String())
	}
	buf.Reset()
	if err := Render(&buf, r, "json"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"reclaimed": null`) {
		t.Errorf("JSON lacks a null record:\n%s", buf.String())
	}
}
