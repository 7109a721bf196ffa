package report

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestHeadline: the JSON's headline holds a month of each figure. By hand
// from the fixture fleet (pipeline/testdata/fleet.yaml, testdata/prices.yaml):
// an A100 at $3.00, three H100s at $6.00 and two L4s at $0.80 an hour for
// 168 h cost $504 + $3,024 + $268.80 = $3,796.80 a week, $16,498.00 at
// 730 h a month; unallocated were 84 A100-hours ($252), 54.857 H100-hours
// ($329.14) and 210 L4-hours ($168), $749.14 a week, $3,255.20 a month.
// Used, idle and unallocated add up to the cost.
func TestHeadline(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), fixturePrices(t))
	h := headlineOf(t, r)
	near := func(what string, got any, want float64) {
		t.Helper()
		g, ok := got.(float64)
		if !ok || math.Abs(g-want) > 0.01 {
			t.Errorf("%s: %v, want %.2f", what, got, want)
		}
	}
	near("fleet_cost", h["fleet_cost"], 16498.00)
	near("unallocated", h["unallocated"], 3255.20)
	used, _ := h["used"].(float64)
	idle, _ := h["idle"].(float64)
	near("used + idle + unallocated", used+idle+h["unallocated"].(float64), 16498.00)
	// The fixture has no consolidation plan: both savings are unknown,
	// with the reason, and the findings' sum is not a third figure.
	why, _ := h["unknown"].(map[string]any)
	for _, k := range []string{"banked", "capacity_freed"} {
		if h[k] != nil || why[k] != "no consolidation plan" {
			t.Errorf("%s: %v (why %v), want null for no consolidation plan", k, h[k], why[k])
		}
	}
	if _, ok := h["savings"]; ok {
		t.Errorf("the headline has a third saving, %v", h["savings"])
	}
	near("change_vs_previous", h["change_vs_previous"], (r.Cluster.Cost-r.Cluster.Previous.Cost)*730/168)
	if h["period"] != "month" || h["currency"] != "USD" {
		t.Errorf("period %v, currency %v", h["period"], h["currency"])
	}

	// Every other format has it before its first section.
	for _, format := range []string{"table", "markdown", "html"} {
		var b bytes.Buffer
		if err := Render(&b, r, format); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		money, summary := strings.Index(s, "$16,498"), strings.Index(strings.ToLower(s), "cluster summary")
		if money < 0 || summary < 0 || money > summary {
			t.Errorf("%s: the month's fleet cost at %d, the summary at %d", format, money, summary)
		}
	}
}

// TestHeadlineUnknown: without prices every money figure is null, with
// its reason beside it, never 0.
func TestHeadlineUnknown(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), nil)
	h := headlineOf(t, r)
	why, _ := h["unknown"].(map[string]any)
	for _, k := range []string{"fleet_cost", "used", "idle", "unallocated", "banked", "capacity_freed", "change_vs_previous"} {
		v, ok := h[k]
		if !ok || v != nil {
			t.Errorf("%s: %v (present %v), want null", k, v, ok)
		}
		if why[k] == nil || why[k] == "" {
			t.Errorf("%s: no reason in headline.unknown %v", k, why)
		}
	}
}

func headlineOf(t *testing.T, r *Report) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := Render(&b, r, "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Headline map[string]any `json:"headline"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Headline == nil {
		t.Fatal("no headline in the JSON")
	}
	return doc.Headline
}

// TestHeadlineSavings: the headline's two savings are the plan's, a month
// already (not scaled again by the window): one 2-L4 node freed at $0.80
// is 2 × 0.80 × 730 = $1,168, and two A100s left free at $3.43 are
// 2 × 3.43 × 730 = $5,007.80.
func TestHeadlineSavings(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), fixturePrices(t))
	banked, freed := 2*0.80*730, 2*3.43*730
	r.Consolidation = &Consolidation{NodesToday: 3, NodesNeeded: 2}
	r.Savings = &Savings{Banked: &banked, NodesFreed: 1, CapacityFreedGPUs: 2, CapacityFreed: &freed}
	h := headlineOf(t, r)
	for k, want := range map[string]float64{"banked": 1168, "capacity_freed": 5007.80} {
		if g, ok := h[k].(float64); !ok || math.Abs(g-want) > 0.005 {
			t.Errorf("%s: %v, want %.2f", k, h[k], want)
		}
	}
	var b bytes.Buffer
	if err := Render(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Saved when the freed nodes go", "$1,168", "1 of 3 nodes can go", "Capacity freed for other work", "$5,008"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table has no %q:\n%s", want, b.String())
		}
	}
}
