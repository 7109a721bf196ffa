package demo

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/serve"
	"github.com/gpulens/gpulens/analyzer/session"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

// systemModels are the catalog keys of the demo's simulated systems: the
// price table's keys, for the fleet's cost from the scenario alone.
var systemModels = map[string]string{
	"dgxa100":      "A100-40GB",
	"dgxa100-80gb": "A100-80GB",
	"dgxh100":      "H100-80GB",
	"dgxh200":      "H200-141GB",
	"dgxb200":      "B200-180GB",
	"l4":           "L4",
}

// TestOneMoneyLedger runs the demo week once, as `make demo` does, and
// holds every place gpulens shows its money to the same figures (issue
// 44): the report in every format, the plan, serve's series after one
// cycle, and the dashboards' cost panels evaluated by Prometheus' engine
// over the demo's TSDB with serve's price series scraped into it.
//
// The fleet's cost is known from the scenario and the price table alone
// (every GPU reports all week: GPUs × hours × its model's price); the
// waste and the savings depend on the simulated load, so their one source
// is the report's ledger, and every other surface must show them.
func TestOneMoneyLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates the demo week (about a minute)")
	}
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "demo-data")
	f := Flags{Duration: "7d", Step: time.Minute, End: "2026-12-06T00:00:00Z", DataDir: dir, Quiet: true}
	o, err := f.Options(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	o.TimelinePoints = 168
	r, err := Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	week := o.End.Sub(o.Start).Hours()

	// The fleet's cost from the scenario and the price table.
	prices := price.DefaultPrices()
	var fleetCost float64
	for _, n := range o.Scenario.Nodes {
		p, err := prices.PerHour(systemModels[n.System])
		if err != nil {
			t.Fatalf("node %s (%s): %v", n.Name, n.System, err)
		}
		fleetCost += float64(n.GPUs) * week * p
	}
	fleetCost = math.Round(fleetCost*100) / 100

	// The report's own figures, JSON as the one source of the rest.
	var js struct {
		Cluster struct {
			Cost           float64 `json:"cost"`
			Waste          float64 `json:"waste"`
			CapacityCost   float64 `json:"capacity_cost"`
			Unallocated    float64 `json:"unallocated_cost"`
			EstimatedWaste float64 `json:"estimated_waste"`
		} `json:"cluster"`
		Findings struct {
			MonthlySavings         float64 `json:"monthly_savings"`
			ReliabilityMonthlyCost float64 `json:"reliability_monthly_cost"`
		} `json:"findings"`
		Consolidation struct {
			MonthlySaving        float64 `json:"monthly_saving"`
			CapacityFreedMonthly float64 `json:"capacity_freed_monthly"`
		} `json:"consolidation"`
		// The report's two savings (issue 54), read off the plan.
		Savings struct {
			Banked        *float64 `json:"banked_monthly"`
			CapacityFreed *float64 `json:"capacity_freed_monthly"`
		} `json:"savings"`
		Ledger ledger.Ledger `json:"ledger"`
		Teams  []struct {
			Team           string  `json:"team"`
			AllocationCost float64 `json:"allocation_cost"`
			UsageCost      float64 `json:"usage_cost"`
		} `json:"teams"`
	}
	if err := json.Unmarshal(render(t, r, "json"), &js); err != nil {
		t.Fatal(err)
	}
	c := js.Cluster
	t.Logf("the demo week: fleet $%.2f (scenario: $%.2f), allocated $%.2f, unallocated $%.2f, idle allocations (waste) $%.2f, estimated waste $%.2f; "+
		"savings by acting $%.2f a month (reliability costs $%.2f), the plan's $%.2f a month",
		c.CapacityCost, fleetCost, c.Cost, c.Unallocated, c.Waste, c.EstimatedWaste,
		js.Findings.MonthlySavings, js.Findings.ReliabilityMonthlyCost, js.Consolidation.MonthlySaving)
	cent(t, "report JSON: fleet cost against the scenario's GPUs × hours × price", c.CapacityCost, fleetCost)
	cent(t, "report JSON: allocated + unallocated = fleet", c.Cost+c.Unallocated, c.CapacityCost)
	cent(t, "report JSON: the ledger's fleet cost", js.Ledger.Allocation.Cost.Cost, c.CapacityCost)
	cent(t, "report JSON: the ledger's usage-basis idle = waste", js.Ledger.Usage.Idle.Cost, c.Waste)
	cent(t, "report JSON: waste + unallocated = estimated waste", c.Waste+c.Unallocated, c.EstimatedWaste)
	if c.Waste <= 0 || c.Unallocated <= 0 || js.Findings.MonthlySavings <= 0 {
		t.Fatalf("the demo week has no waste, no unallocated GPUs or no savings: nothing held to one figure")
	}
	if js.Savings.Banked == nil || js.Savings.CapacityFreed == nil || *js.Savings.CapacityFreed <= 0 {
		t.Fatalf("the report's savings %+v: want both known, and capacity freed", js.Savings)
	}
	banked, capacityFreed := *js.Savings.Banked, *js.Savings.CapacityFreed
	cent(t, "report JSON: the banked saving is the consolidation's", banked, js.Consolidation.MonthlySaving)
	cent(t, "report JSON: the capacity freed is the consolidation's", capacityFreed, js.Consolidation.CapacityFreedMonthly)
	var teamAlloc, teamUsage float64
	for _, tm := range js.Teams {
		teamAlloc += tm.AllocationCost
		teamUsage += tm.UsageCost
	}
	cent(t, "report JSON: the teams' allocation charges", teamAlloc, c.Cost)

	t.Run("report CSV", func(t *testing.T) {
		rows, err := csv.NewReader(bytes.NewReader(render(t, r, "csv"))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range rows[0] {
			col[h] = i
		}
		sum := map[string]map[string]float64{}
		for _, row := range rows[1:] {
			scope := row[col["scope"]]
			if sum[scope] == nil {
				sum[scope] = map[string]float64{}
			}
			for _, k := range []string{"cost", "waste", "allocation_cost", "usage_cost"} {
				v, err := strconv.ParseFloat(row[col[k]], 64)
				if err != nil {
					t.Fatalf("%s row, %s: %v", scope, k, err)
				}
				sum[scope][k] += v
			}
		}
		for _, k := range []string{"allocation_cost", "usage_cost"} {
			cent(t, "CSV: teams + unallocated = fleet ("+k+")", sum["team"][k]+sum["unallocated"][k], c.CapacityCost)
			cent(t, "CSV: the fleet row ("+k+")", sum["cluster"][k], c.CapacityCost)
		}
		cent(t, "CSV: teams' cost = allocated", sum["team"]["cost"], c.Cost)
		cent(t, "CSV: unallocated row's cost", sum["unallocated"]["cost"], c.Unallocated)
		cent(t, "CSV: fleet row's waste = estimated waste", sum["cluster"]["waste"], c.EstimatedWaste)
		cent(t, "CSV: unallocated row's usage charge = idle + unallocated", sum["unallocated"]["usage_cost"], c.EstimatedWaste)
	})

	// The human formats print the summary in whole dollars a month (the
	// week's, × 730 / 168; issue 54: one period for every figure it leads
	// with), the two savings, and the reconciliation to the cent.
	month := func(v float64) float64 { return v / week * vocab.HoursPerMonth }
	for _, format := range []string{"markdown", "html", "table"} {
		t.Run("report "+format, func(t *testing.T) {
			out := string(render(t, r, format))
			for _, want := range []string{
				dollars(month(c.CapacityCost), 0), dollars(month(c.EstimatedWaste), 0), dollars(month(c.Waste), 0), dollars(month(c.Unallocated), 0),
				dollars(banked, 0), dollars(capacityFreed, 0),
				dollars(c.CapacityCost, 2), dollars(c.Cost, 2), dollars(c.Unallocated, 2), dollars(c.Waste, 2), dollars(teamUsage, 2),
			} {
				if !strings.Contains(out, want) {
					t.Errorf("%s does not show %s", format, want)
				}
			}
		})
	}

	db, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	open := func() *session.Session {
		s, err := session.New(ctx, db, session.Config{Schema: native.SchemaName, Start: o.Start, End: o.End, Step: o.Step,
			NoKubernetes: "the demo simulates its fleet, with no cluster"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}

	t.Run("plan", func(t *testing.T) {
		p, err := open().Plan(ctx, session.PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := plan.Write(&b, p, "json"); err != nil {
			t.Fatal(err)
		}
		var pj struct {
			MonthlySaving float64 `json:"monthly_saving_usd"`
			CapacityFreed float64 `json:"capacity_freed_monthly_usd"`
			Pools         []struct {
				Product      string   `json:"product"`
				PerGPUHour   float64  `json:"price_per_gpu_hour"`
				PerNodeHour  *float64 `json:"price_per_node_hour"`
				NodesToday   int      `json:"nodes_today"`
				NodesNeeded  int      `json:"nodes_needed"`
				HeadroomGPUs int      `json:"headroom_gpus"`
			} `json:"pools"`
		}
		if err := json.Unmarshal(b.Bytes(), &pj); err != nil {
			t.Fatal(err)
		}
		// The plan saves the bill of the nodes it frees, and the report's
		// consolidation is that plan: its savings are never the findings'
		// GPU time, which frees capacity only until a node goes.
		cent(t, "plan: the report's consolidation saving", pj.MonthlySaving, js.Consolidation.MonthlySaving)
		cent(t, "plan: the report's banked saving", pj.MonthlySaving, banked)
		cent(t, "plan: the report's capacity freed", pj.CapacityFreed, capacityFreed)
		var freed float64
		for _, pool := range pj.Pools {
			if pool.PerNodeHour == nil {
				t.Fatalf("pool %s has no node price", pool.Product)
			}
			freed += float64(pool.NodesToday-pool.NodesNeeded) * *pool.PerNodeHour * vocab.HoursPerMonth
			// One price per model: the ledger's.
			for _, g := range js.Ledger.GPUs {
				if g.Model == pool.Product && g.PricePerHour != pool.PerGPUHour {
					t.Errorf("%s: the plan prices a GPU-hour at %v, the ledger at %v", pool.Product, pool.PerGPUHour, g.PricePerHour)
					break
				}
			}
		}
		cent(t, "plan: the freed nodes' price a month", pj.MonthlySaving, freed)
	})

	// serve's series after one cycle, scraped by a Prometheus every
	// minute of the week into the demo's TSDB.
	svc := serve.New(serve.Options{Interval: 5 * time.Minute, Analyze: func(ctx context.Context) (*serve.Result, error) {
		r, a, err := open().Report(ctx, o.TimelinePoints)
		if err != nil {
			return nil, err
		}
		return &serve.Result{Findings: a.Findings.Findings, Report: r}, nil
	}})
	svc.Cycle(ctx)
	rec := httptest.NewRecorder()
	svc.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	app := db.Appender(ctx)
	for ts := o.Start; !ts.After(o.End); ts = ts.Add(o.Step) {
		if _, err := source.AppendExposition(app, rec.Body.Bytes(), "", ts); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	query := func(t *testing.T, q string) float64 {
		t.Helper()
		v, err := db.Query(ctx, q, o.End)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(v) != 1 {
			t.Fatalf("%s: %d series, want 1: %v", q, len(v), v)
		}
		return float64(v[0].Value)
	}
	// monthly turns the week's dollars into serve's and the dashboards'
	// 730-hour month.
	monthly := func(v float64) float64 { return v / week * vocab.HoursPerMonth }

	t.Run("serve", func(t *testing.T) {
		fleet := vocab.SeriesFleetMonthlyCost
		cent(t, "serve: the fleet's cost", query(t, "sum("+fleet+")"), monthly(c.CapacityCost))
		cent(t, "serve: held (used + idle)", query(t, "sum("+fleet+`{state!="unallocated"})`), monthly(c.Cost))
		cent(t, "serve: idle = waste", query(t, "sum("+fleet+`{state="idle"})`), monthly(c.Waste))
		cent(t, "serve: unallocated", query(t, "sum("+fleet+`{state="unallocated"})`), monthly(c.Unallocated))
		cent(t, "serve: the teams' cost", query(t, "sum("+vocab.SeriesTeamMonthlyCost+")"), monthly(c.Cost))
		cent(t, "serve: the banked saving", query(t, "sum("+vocab.SeriesFleetMonthlySavings+`{kind="banked"})`), banked)
		cent(t, "serve: the capacity freed", query(t, "sum("+vocab.SeriesFleetMonthlySavings+`{kind="capacity_freed"})`), capacityFreed)
		// The report's savings are the recommendations that save; those
		// that cost (reliability) are apart, with a negative saving.
		cent(t, "serve: the findings' savings", query(t, "sum("+vocab.SeriesFindingMonthlySavings+" > 0)"), js.Findings.MonthlySavings)
		cent(t, "serve: the reliability changes' cost", -query(t, "sum("+vocab.SeriesFindingMonthlySavings+" < 0) or vector(0)"), js.Findings.ReliabilityMonthlyCost)
		for _, g := range js.Ledger.GPUs {
			got := query(t, vocab.SeriesPriceGPUHour+`{model="`+g.Model+`"}`)
			if got != g.PricePerHour {
				t.Errorf("serve prices %s at %v, the ledger at %v", g.Model, got, g.PricePerHour)
			}
		}
	})

	// The dashboards' cost panels as committed, at the end of the week
	// over its range. $gpu_hourly_price is absurd: a GPU it priced, not
	// serve's series, would show.
	t.Run("dashboards", func(t *testing.T) {
		vars := strings.NewReplacer(`"$cluster"`, `".*"`, `"$node"`, `".*"`, `"$namespace"`, `".*"`, `"$pod"`, `".*"`, `"$severity"`, `".*"`,
			"$__range", "7d", "$team_label", "namespace", "$gpu_hourly_price", "1000")
		fleet := panels(t, "fleet-overview.json")
		team := panels(t, "team-efficiency.json")
		found := panels(t, "findings.json")
		cent(t, "findings: saved when the freed nodes go", query(t, vars.Replace(found["Saved when the freed nodes go"][0])), banked)
		cent(t, "findings: capacity freed for other work", query(t, vars.Replace(found["Capacity freed for other work"][0])), capacityFreed)
		cent(t, "findings: monthly fleet cost", query(t, vars.Replace(found["Monthly fleet cost"][0])), monthly(c.CapacityCost))
		// Held and unallocated capacity are the ledger's to the cent: the
		// panels integrate each allocation's share and each GPU's free
		// part at the same one-minute steps the analysis reads, at the
		// same prices. What was held and not used differs by design: an
		// allocation's minutes without a utilisation reading (the demo's
		// ETL workers between batches, 674 of 10,080 minutes each) are
		// charged by the ledger at the allocation's average use over the
		// minutes it was read, and counted unused by the panels, which
		// have no average to extrapolate; and the panels net use over the
		// range where the ledger nets it hour by hour (a busy hour's
		// surplus offsets an idle hour's there, which makes the panels'
		// figure smaller). Together -0.144% of the week's waste; 0.5%
		// holds it, and fails a panel that caps use per
		// minute (+0.55% here), leaves out partly held GPUs (39%) or prices a
		// GPU at $gpu_hourly_price.
		cent(t, "fleet overview: held capacity", query(t, vars.Replace(fleet["Held capacity"][0])), monthly(c.Cost))
		cent(t, "fleet overview: unallocated", query(t, vars.Replace(fleet["Unallocated capacity"][0])), monthly(c.Unallocated))
		byTeam := team["GPU-hours by team"]
		cent(t, "team efficiency: the teams' cost", query(t, "sum("+vars.Replace(byTeam[3])+")"), c.Cost)
		perTeam, err := db.Query(ctx, vars.Replace(byTeam[3]), o.End)
		if err != nil {
			t.Fatal(err)
		}
		if len(perTeam) != len(js.Teams) {
			t.Errorf("team efficiency: %d teams, the report %d", len(perTeam), len(js.Teams))
		}
		for _, x := range perTeam {
			for _, tm := range js.Teams {
				if string(x.Metric["namespace"]) == tm.Team {
					cent(t, "team efficiency: "+tm.Team+"'s cost", float64(x.Value), tm.AllocationCost)
				}
			}
		}
		const tol = 0.005
		near(t, "fleet overview: held but unused", query(t, vars.Replace(fleet["Held but unused capacity"][0])), monthly(c.Waste), tol)
		near(t, "team efficiency: the teams' unused", query(t, "sum("+vars.Replace(byTeam[4])+")"), c.Cost-teamUsage, tol)
	})
}

func render(t *testing.T, r *report.Report, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := report.Render(&b, r, format); err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	return b.Bytes()
}

// panels are a committed native dashboard's queries by panel title, in
// their order.
func panels(t *testing.T, file string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "dashboards", "native", file))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out[p.Title] = append(out[p.Title], tg.Expr)
		}
	}
	return out
}

// cent: the same money to the cent.
func cent(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) >= 0.005 {
		t.Errorf("%s: $%.4f, want $%.4f", what, got, want)
	}
}

// near: within a relative tolerance.
func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	t.Logf("%s: $%.2f against $%.2f (%+.3f%%)", what, got, want, 100*(got-want)/want)
	if math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s: $%.2f, want $%.2f within %.1f%%", what, got, want, 100*tol)
	}
}

// dollars writes v as the reports do: $12,345 or $12,345.67.
func dollars(v float64, decimals int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, d := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return fmt.Sprintf("$%s", b.String())
}
