package report

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/price"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/recommend"
)

// vgpuDay is testdata/vgpu-vks.prom (two real scrapes from vGPU guests)
// scraped once a minute for a day into an embedded store, analysed and
// reported with prices.
func vgpuDay(t *testing.T, prices *price.Prices) *Report {
	return scrapeDay(t, "testdata/vgpu-vks.prom", prices)
}

// scrapeDay is a real scrape (file) repeated every minute for a day and
// the day before, analysed and reported with prices.
func scrapeDay(t *testing.T, file string, prices *price.Prices) *Report {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	start := end.Add(-24 * time.Hour)
	// The previous window is scraped too, so the day is whole and the
	// week-over-week figures have a window to compare with.
	db := pipelinetest.Scraped(t, data, start.Add(-24*time.Hour), end, time.Minute)
	a, err := pipeline.Run(context.Background(), pipeline.Options{Source: db, Start: start, End: end, Prices: prices})
	if err != nil {
		t.Fatal(err)
	}
	return buildReport(Input{Schema: a.Schema.Name(), Current: a.Current, Previous: a.Previous, Comparable: a.Comparable,
		Findings: a.Findings, Notes: a.Notes}, prices)
}

// TestVGPUPricedAsItsShare: the real scrapes of a GRID A100-10C and an
// NVIDIA H100-20C vGPU, repeated for a day. Each is priced as its
// framebuffer's share of its board (NVIDIA AI Enterprise 6's vGPU tables:
// A100-40C holds a whole A100 PCIe 40GB, H100-80C a whole H100 PCIe
// 80GB): 10/40 = 0.25 of the A100-40GB's price, 20/80 = 0.25 of the
// H100-80GB's, never the whole board's (4 × as much).
func TestVGPUPricedAsItsShare(t *testing.T) {
	const pA100, pH100, hours = 2.00, 8.00, 24.0
	prices, err := price.DefaultPrices().Override([]byte("prices: {A100-40GB: 2.00, H100-80GB: 8.00}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := vgpuDay(t, prices)
	want := map[string]float64{ // model: USD for the day, by hand
		"GRID A100-10C":   0.25 * pA100 * hours, // $12
		"NVIDIA H100-20C": 0.25 * pH100 * hours, // $48
	}
	if len(r.Fleet) != len(want) {
		t.Fatalf("fleet %+v, want the two vGPUs", r.Fleet)
	}
	for _, m := range r.Fleet {
		w, ok := want[m.Model]
		if !ok || m.GPUs != 1 || math.Abs(m.CapacityGPUHours-hours) > 1e-9 || !m.CostKnown || math.Abs(m.Cost-w) > 1e-9 {
			t.Errorf("fleet row %s: %d GPUs, %.4g GPU-h, cost %.4g (known %v); want 1 GPU, %g GPU-h, cost %g",
				m.Model, m.GPUs, m.CapacityGPUHours, m.Cost, m.CostKnown, hours, w)
		}
		if m.PricePerHour == nil || math.Abs(*m.PricePerHour-w/hours) > 1e-12 || !strings.Contains(m.PriceSource, "of the") {
			t.Errorf("fleet row %s: price %v from %q; want %g, the board's share said", m.Model, m.PricePerHour, m.PriceSource, w/hours)
		}
	}
	c := r.Cluster
	if !c.CapacityCostKnown || math.Abs(c.CapacityCost-(12+48)) > 1e-9 {
		t.Errorf("fleet cost %g (known %v), want $60", c.CapacityCost, c.CapacityCostKnown)
	}
	// No pod holds the A100-10C: its whole day is unallocated.
	if math.Abs(c.UnallocatedCost-12) > 1e-9 {
		t.Errorf("unallocated cost %g, want $12 (the A100-10C's day)", c.UnallocatedCost)
	}
	// The pod on the H100-20C: team default pays the vGPU's share.
	if len(r.Teams) != 1 || r.Teams[0].Team != "default" || math.Abs(r.Teams[0].Cost-48) > 1e-9 || !r.Teams[0].CostKnown {
		t.Errorf("teams %+v, want default paying $48", r.Teams)
	}
	for _, f := range r.Findings.Items {
		if strings.Contains(f.Summary, "MIG slice") || strings.Contains(f.Summary, "mig.config") {
			t.Errorf("finding %s on a vGPU gives MIG advice: %s", f.Kind, f.Summary)
		}
	}
	for _, x := range r.Recommendations {
		if x.Action == string(recommend.ActionMIGProfile) {
			t.Errorf("recommendation %+v: MIG advice on a vGPU", x)
		}
	}
	var b strings.Builder
	if err := Render(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "Cost of the fleet") || !strings.Contains(out, "$60") {
		t.Errorf("table does not say the fleet cost $60:\n%s", out)
	}
}

// unpricedResult is a day of one priced H100 held by team a, and gpus
// vGPUs of a board the price table has no price for (an A40: NVIDIA's
// tables give its framebuffer, the embedded table no price), one held by
// team b.
func unpricedResult(withH100 bool, gpus int) *fleet.Result {
	end := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	res := &fleet.Result{Window: fleet.Window{Start: end.Add(-24 * time.Hour), End: end, Step: time.Minute}, ExpectedSteps: 1440}
	add := func(uuid, model, ns string) {
		k := fleet.GPUKey{Node: "n1", UUID: uuid}
		res.GPUs = append(res.GPUs, fleet.GPU{GPUKey: k, Model: model, ReportedHours: 24, Steps: 1440, UtilizationSteps: 1440, AvgUtilization: 0.1})
		if ns != "" {
			res.Allocations = append(res.Allocations, fleet.Allocation{AllocationKey: fleet.AllocationKey{Namespace: ns, Pod: ns + "-pod", Node: "n1", UUID: uuid}, Model: model,
				AllocatedGPUHours: 24, UtilizationSteps: 1440, AvgUtilization: 0.1})
		}
	}
	if withH100 {
		add("GPU-h100", "NVIDIA H100 80GB HBM3", "a")
	}
	for i := range gpus {
		ns := ""
		if i == 0 {
			ns = "b"
		}
		add("GPU-a40-"+string(rune('0'+i)), "GRID A40-24C", ns)
	}
	return res
}

// TestUnknownPriceIsNotZero: a model without a price makes every money
// figure holding it unknown, or partial where other GPUs are priced, in
// the table, the Markdown and the JSON; never $0.
func TestUnknownPriceIsNotZero(t *testing.T) {
	const pH100 = 8.00
	prices, err := price.DefaultPrices().Override([]byte("prices: {H100-80GB: 8.00}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	unknown := "unknown (no price for GRID A40-24C; add it to the price file)"
	for _, c := range []struct {
		name     string
		withH100 bool
		// what the table must say, by hand: the H100's day is 8 × 24 =
		// $192, its idle 90% $172.80.
		want    []string
		notWant []string
	}{
		{name: "only unpriced", withH100: false,
			want: []string{"Cost of the fleet, a month | " + unknown, "Waste, a month | " + unknown + " |", "| b | b | 24.0 | 2.4 | 10% | 21.6 | 0.0 | " + unknown,
				"| 1 | b | node  | release-allocation | " + unknown},
			notWant: []string{"$0"}},
		{name: "partly priced", withH100: true,
			// A month of the window's day: $192 × 730 / 24 = $5,840,
			// its idle $172.80 × 730 / 24 = $5,256.
			want: []string{"Cost of the fleet, a month | $5,840 + unknown for 3 GPUs of GRID A40-24C",
				"| a | a | 24.0 | 2.4 | 10% | 21.6 | 0.0 | $192 | $173 |", "| b | b | 24.0 | 2.4 | 10% | 21.6 | 0.0 | " + unknown,
				"idle allocations $5,256 + unknown for 24.0 GPU-h of GRID A40-24C",
				"| 1 | a | node  | release-allocation | $5,840 |", "| 2 | b | node  | release-allocation | " + unknown}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := unpricedResult(c.withH100, 3)
			// Each team's idle workload is told to release its GPU: the
			// H100's saves 8 × 730 = $5,840 a month, the vGPU's an
			// unknown sum (findings.Detect's figures, as it sets them).
			fs := &findings.Result{Findings: []findings.Finding{{Kind: "idle-allocation", Severity: findings.Warning, Namespace: "b", Workload: "nb",
				Model: "GRID A40-24C", Summary: "b/nb idle", Recommendation: &recommend.Recommendation{Action: recommend.ActionRelease, CurrentShare: 1}}}}
			if c.withH100 {
				fs.Findings = append(fs.Findings, findings.Finding{Kind: "idle-allocation", Severity: findings.Warning, Namespace: "a", Workload: "nb",
					Model: "NVIDIA H100 80GB HBM3", Summary: "a/nb idle", CostKnown: true, MonthlyCostUSD: pH100 * 730, MonthlySavingsUSD: pH100 * 730,
					Recommendation: &recommend.Recommendation{Action: recommend.ActionRelease, CurrentShare: 1}})
			}
			r := buildReport(Input{Schema: "dcgm-exporter", Current: res, Previous: &fleet.Result{Window: res.Window}, Findings: fs}, prices)
			if r.Cluster.CapacityCostKnown || r.Cluster.CapacityUnpriced == nil || r.Cluster.CapacityUnpriced.GPUs != 3 ||
				r.Cluster.CapacityUnpriced.Partial != c.withH100 {
				t.Errorf("capacity unpriced %+v (known %v): want 3 GPUs, partial %v", r.Cluster.CapacityUnpriced, r.Cluster.CapacityCostKnown, c.withH100)
			}
			if c.withH100 && math.Abs(r.Cluster.CapacityCost-pH100*24) > 1e-9 {
				t.Errorf("priced part %g, want %g", r.Cluster.CapacityCost, pH100*24)
			}
			for _, tm := range r.Teams {
				if tm.Team == "b" && (tm.CostKnown || tm.Unpriced == nil || tm.Unpriced.Partial) {
					t.Errorf("team b %+v: its cost is unknown", tm)
				}
				if tm.Team == "a" && (!tm.CostKnown || math.Abs(tm.Cost-pH100*24) > 1e-9) {
					t.Errorf("team a %+v: want $192, known", tm)
				}
			}
			for _, m := range r.Fleet {
				if m.Model == "GRID A40-24C" && (m.CostKnown || m.PricePerHour != nil) {
					t.Errorf("fleet row %+v: want no price", m)
				}
			}
			var md strings.Builder
			if err := Render(&md, r, "markdown"); err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(md.String(), w) {
					t.Errorf("markdown lacks %q:\n%s", w, md.String())
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(md.String(), w) {
					t.Errorf("markdown says %q:\n%s", w, md.String())
				}
			}
			var js strings.Builder
			if err := Render(&js, r, "json"); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(js.String(), `"cost_known": false`) || !strings.Contains(js.String(), `"capacity_cost_known": false`) {
				t.Errorf("JSON does not mark the cost unknown:\n%s", js.String())
			}
			var csvOut strings.Builder
			if err := Render(&csvOut, r, "csv"); err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(csvOut.String(), "\n") {
				if strings.HasPrefix(line, "team,b,") || strings.HasPrefix(line, "cluster,") {
					if f := strings.Split(line, ","); f[9] != "" || f[10] != "" {
						t.Errorf("CSV row %q: cost and waste must be empty (unknown), not a number", line)
					}
				}
			}
		})
	}
}

// TestUnknownMoneyIsNullInJSON: in -o json a money figure is a number
// only where it is known; where part of it is priced, that part is beside
// it as FIELD_priced, and the top-level cost_known is false while any
// model is unpriced (price_table says a table was given). At 36bc8ff the
// JSON held "estimated_waste": 0 and "monthly_savings": 0 for unpriced
// GPUs and cost_known true: a script summing the fleet read $0. The
// figures are by hand: the H100's day is 8 × 24 = $192, its release
// 8 × 730 = $5,840 a month.
func TestUnknownMoneyIsNullInJSON(t *testing.T) {
	prices, err := price.DefaultPrices().Override([]byte("prices: {H100-80GB: 8.00}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type money = map[string]any
	for _, c := range []struct {
		name     string
		withH100 bool
		cluster  money
		findings money
	}{
		{"only unpriced", false,
			money{"cost": nil, "estimated_waste": nil, "capacity_cost": nil, "cost_priced": "absent", "capacity_cost_known": false},
			money{"monthly_savings": nil, "monthly_savings_priced": "absent"}},
		{"partly priced", true,
			money{"cost": nil, "cost_priced": 192.0, "capacity_cost": nil, "capacity_cost_priced": 192.0, "estimated_waste": nil},
			money{"monthly_savings": nil, "monthly_savings_priced": 5840.0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := unpricedResult(c.withH100, 3)
			fs := &findings.Result{Findings: []findings.Finding{{Kind: "idle-allocation", Severity: findings.Warning, Namespace: "b", Workload: "nb",
				Model: "GRID A40-24C", Summary: "b/nb idle", Recommendation: &recommend.Recommendation{Action: recommend.ActionRelease, CurrentShare: 1}}}}
			if c.withH100 {
				fs.Findings = append(fs.Findings, findings.Finding{Kind: "idle-allocation", Severity: findings.Warning, Namespace: "a", Workload: "nb",
					Model: "NVIDIA H100 80GB HBM3", Summary: "a/nb idle", CostKnown: true, MonthlyCostUSD: 8 * 730, MonthlySavingsUSD: 8 * 730,
					Recommendation: &recommend.Recommendation{Action: recommend.ActionRelease, CurrentShare: 1}})
			}
			r := buildReport(Input{Schema: "dcgm-exporter", Current: res, Previous: &fleet.Result{Window: res.Window}, Findings: fs}, prices)
			for _, format := range []string{"json", "yaml"} {
				var out strings.Builder
				if err := Render(&out, r, format); err != nil {
					t.Fatal(err)
				}
				var doc map[string]any
				if err := yaml.Unmarshal([]byte(out.String()), &doc); err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				if doc["cost_known"] != false || doc["price_table"] != true {
					t.Errorf("%s: cost_known %v, price_table %v; want false, true", format, doc["cost_known"], doc["price_table"])
				}
				check := func(what string, obj map[string]any, want money) {
					for k, w := range want {
						got, ok := obj[k]
						switch {
						case w == "absent" && ok:
							t.Errorf("%s %s: %s is %v, want it absent", format, what, k, got)
						case w != "absent" && (!ok || got != w):
							t.Errorf("%s %s: %s is %v (present %v), want %v", format, what, k, got, ok, w)
						}
					}
				}
				check("cluster", doc["cluster"].(map[string]any), c.cluster)
				check("findings", doc["findings"].(map[string]any), c.findings)
				for _, tm := range doc["teams"].([]any) {
					if tm := tm.(map[string]any); tm["team"] == "b" {
						check("team b", tm, money{"cost": nil, "waste": nil, "cost_priced": "absent"})
					}
				}
			}
		})
	}
}
