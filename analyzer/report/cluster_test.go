package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/rollup"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/vocab"
)

// usTeams is the us cluster's inventory: as eu's (teamsInventory), but
// vision belongs to team ml there. The same namespace in two clusters is
// two teams' where their inventories say so.
func usTeams() *inventory.Inventory {
	inv := teamsInventory()
	inv.Namespaces["vision"] = inventory.Namespace{Name: "vision", Team: "ml"}
	return inv
}

// alice is research/alice-jupyter of the fixture fleet, which the us
// cluster does not run: a whole H100 held the whole week (from 168h of
// the fixture's two) at 2% use, at testdata/prices.yaml's $6 an hour.
const (
	aliceHours = 168.0
	aliceUtil  = 0.02
	h100Price  = 6.0
)

// clusterReport analyses one store of two clusters, eu and us, each the
// fixture fleet under its cluster label, except that us does not run
// research/alice-jupyter: its H100 GPU-h100-b is unallocated this week.
// The fixture's device keeps its 30% load, so the findings read that GPU
// as in use by a tenant the data does not name (info), not as free
// capacity to scale down.
func clusterReport(t testing.TB, prices *price.Prices) *Report {
	t.Helper()
	read := func(cluster string) *pipelinetest.Fixture {
		f, err := pipelinetest.Read("../pipeline/testdata/fleet.yaml")
		if err != nil {
			t.Fatal(err)
		}
		f.Labels = map[string]string{vocab.DefaultClusterLabel: cluster}
		return f
	}
	eu, us := read("eu"), read("us")
	us.Allocations = slices.DeleteFunc(us.Allocations, func(a pipelinetest.Allocation) bool { return a.Pod == "alice-jupyter" })
	dir := t.TempDir()
	if err := pipelinetest.WriteAll(dir, eu, us); err != nil {
		t.Fatal(err)
	}
	src, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	a, err := pipeline.Run(context.Background(), pipeline.Options{Source: src, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd,
		ClusterLabel: vocab.DefaultClusterLabel, Prices: prices, TimelinePoints: 28})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Clusters, []string{"eu", "us"}) {
		t.Fatalf("clusters %q, want eu and us", a.Clusters)
	}
	invs := map[string]*inventory.Inventory{"eu": teamsInventory(), "us": usTeams()}
	team := func(cluster, ns string) string { return invs[cluster].Team(ns) }
	return buildReport(Input{Schema: a.Schema.Name(), Current: a.Current, Previous: a.Previous, Comparable: a.Comparable,
		Findings: a.Findings, Team: team, Timeline: a.Timeline, Notes: a.Notes}, prices)
}

// TestClusterGolden renders the two-cluster week in every format and
// compares it with testdata/report.clusters.golden.* (go test -run
// TestClusterGolden -update rewrites them).
func TestClusterGolden(t *testing.T) {
	r := clusterReport(t, fixturePrices(t))
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Render(&buf, r, format); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "testdata/report.clusters.golden."+goldenExt[format], buf.Bytes())
			var again bytes.Buffer
			_ = Render(&again, r, format)
			if !bytes.Equal(buf.Bytes(), again.Bytes()) {
				t.Errorf("%s is not deterministic", format)
			}
		})
	}
}

// clusterFigures are a summary's figures, to be added up and compared.
func clusterFigures(c rollup.Cluster) map[string]float64 {
	m := map[string]float64{
		"gpus": float64(c.GPUs), "capacity": c.CapacityGPUHours, "allocated": c.AllocatedGPUHours, "unallocated": c.UnallocatedGPUHours,
		"used": c.UsedGPUHours, "idle": c.IdleGPUHours, "unmeasured": c.UnmeasuredGPUHours, "cost": c.Cost, "waste": c.Waste,
		"capacity cost": c.CapacityCost, "unallocated cost": c.UnallocatedCost, "estimated waste": c.EstimatedWaste,
	}
	if c.Previous != nil {
		m["previous allocated"], m["previous used"], m["previous cost"], m["previous waste"] =
			c.Previous.AllocatedGPUHours, c.Previous.UsedGPUHours, c.Previous.Cost, c.Previous.Waste
	}
	return m
}

// TestClusterSummaries: each cluster's summary is the one its own store
// gives (eu is the fixture fleet, whose report the goldens pin; us is it
// without alice's notebook), and the clusters add up to the fleet, as the
// teams of each cluster add up to it.
func TestClusterSummaries(t *testing.T) {
	prices := fixturePrices(t)
	r := clusterReport(t, prices)
	single := fixtureReport(t, teamsInventory(), prices)
	if single.Clusters != nil {
		t.Fatalf("a store of one cluster has cluster summaries %+v", single.Clusters)
	}
	if len(r.Clusters) != 2 || r.Clusters[0].Name != "eu" || r.Clusters[1].Name != "us" {
		t.Fatalf("clusters %+v, want eu and us", r.Clusters)
	}
	eu, us := r.Clusters[0], r.Clusters[1]

	// eu is the fixture fleet.
	want := clusterFigures(single.Cluster)
	for k, v := range clusterFigures(eu.Cluster) {
		if !near(v, want[k]) {
			t.Errorf("eu %s %g, want the fixture fleet's %g", k, v, want[k])
		}
	}
	// us is the fixture fleet less alice's notebook: her GPU-hours are
	// unallocated there, at the same price; last week, before alice, the
	// two are the same.
	aliceUsed := aliceHours * aliceUtil
	diff := map[string]float64{
		"allocated": -aliceHours, "unallocated": aliceHours, "used": -aliceUsed, "idle": -(aliceHours - aliceUsed),
		"cost": -aliceHours * h100Price, "waste": -(aliceHours - aliceUsed) * h100Price, "unallocated cost": aliceHours * h100Price,
		// Estimated waste is idle cost plus unallocated cost: alice's
		// idle hours leave it, her whole allocation joins the unallocated.
		"estimated waste": -(aliceHours-aliceUsed)*h100Price + aliceHours*h100Price,
	}
	for k, v := range clusterFigures(us.Cluster) {
		if w := want[k] + diff[k]; !near(v, w) {
			t.Errorf("us %s %g, want the fixture fleet's %g %+g = %g", k, v, want[k], diff[k], w)
		}
	}
	if eu.Previous == nil || us.Previous == nil || eu.Change == nil || us.Change == nil {
		t.Fatalf("eu previous %v change %v, us previous %v change %v: both clusters have last week's data", eu.Previous, eu.Change, us.Previous, us.Change)
	}

	// The clusters add up to the fleet, and so do their savings.
	sum := map[string]float64{}
	savings := 0.0
	for _, c := range r.Clusters {
		for k, v := range clusterFigures(c.Cluster) {
			sum[k] += v
		}
		savings += c.MonthlySavings
	}
	for k, v := range clusterFigures(r.Cluster) {
		if !near(sum[k], v) {
			t.Errorf("clusters' %s %g, fleet's %g", k, sum[k], v)
		}
	}
	if !near(savings, r.Findings.MonthlySavings) || !near(eu.MonthlySavings, single.Findings.MonthlySavings) {
		t.Errorf("savings: clusters' %g of the fleet's %g; eu %g, the fixture fleet %g", savings, r.Findings.MonthlySavings, eu.MonthlySavings, single.Findings.MonthlySavings)
	}
	if !near(r.Cluster.AllocatedGPUHours, 2*single.Cluster.AllocatedGPUHours-aliceHours) {
		t.Errorf("fleet allocated %g, want twice the fixture's %g less alice's %g", r.Cluster.AllocatedGPUHours, single.Cluster.AllocatedGPUHours, aliceHours)
	}

	// Each cluster's teams add up to it, and a team is of one cluster.
	byCluster := map[string]*rollup.Hours{"eu": {}, "us": {}}
	seen := map[[2]string]bool{}
	for _, team := range r.Teams {
		k := [2]string{team.Cluster, team.Team}
		if seen[k] {
			t.Errorf("team %s of %s listed twice", team.Team, team.Cluster)
		}
		seen[k] = true
		byCluster[team.Cluster].Sum(team.Hours)
	}
	for _, c := range r.Clusters {
		got := byCluster[c.Name]
		for _, p := range [][3]any{
			{"allocated", got.AllocatedGPUHours, c.AllocatedGPUHours}, {"used", got.UsedGPUHours, c.UsedGPUHours},
			{"idle", got.IdleGPUHours, c.IdleGPUHours}, {"unmeasured", got.UnmeasuredGPUHours, c.UnmeasuredGPUHours},
			{"cost", got.Cost, c.Cost}, {"waste", got.Waste, c.Waste},
		} {
			if !near(p[1].(float64), p[2].(float64)) {
				t.Errorf("%s: teams' %s %g, cluster's %g", c.Name, p[0], p[1], p[2])
			}
		}
	}
}

// TestClusterTeams: teams are of one cluster, as each cluster's inventory
// names them: vision is its own team in eu and part of ml in us.
func TestClusterTeams(t *testing.T) {
	r := clusterReport(t, fixturePrices(t))
	var got []string
	by := map[string]rollup.Team{}
	for _, team := range r.Teams {
		k := team.Cluster + "/" + team.Team
		got = append(got, k)
		by[k] = team
	}
	slices.Sort(got)
	if want := []string{"eu/ml", "eu/serving", "eu/vision", "us/ml", "us/serving"}; !slices.Equal(got, want) {
		t.Fatalf("teams %q, want %q", got, want)
	}
	// research held nothing in us this week: alice's notebook was its
	// only allocation.
	if ns := by["us/ml"].Namespaces; !slices.Equal(ns, []string{"training", "vision"}) {
		t.Errorf("us/ml namespaces %q, want training and vision", ns)
	}
	// us/ml is eu's ml and vision, less alice.
	if w := by["eu/ml"].AllocatedGPUHours + by["eu/vision"].AllocatedGPUHours - aliceHours; !near(by["us/ml"].AllocatedGPUHours, w) {
		t.Errorf("us/ml allocated %g, want %g", by["us/ml"].AllocatedGPUHours, w)
	}
	// Fleet rows, findings and recommendations name their cluster.
	for _, m := range r.Fleet {
		if m.Cluster != "eu" && m.Cluster != "us" {
			t.Errorf("fleet row %s names cluster %q", m.Model, m.Cluster)
		}
	}
	if len(r.Fleet) != 6 {
		t.Errorf("%d fleet rows, want each cluster's 3 models", len(r.Fleet))
	}
	for _, f := range r.Findings.Items {
		if f.Cluster == "" {
			t.Errorf("finding %s on %s names no cluster", f.Kind, f.Subject)
		}
		if f.Namespace == "vision" && f.Team != map[string]string{"eu": "vision", "us": "ml"}[f.Cluster] {
			t.Errorf("finding %s on %s of %s is team %s's", f.Kind, f.Subject, f.Cluster, f.Team)
		}
	}
	for _, x := range r.Recommendations {
		if x.Cluster == "" {
			t.Errorf("recommendation for %s names no cluster", x.Workload)
		}
	}
	if !slices.ContainsFunc(r.Findings.Items, func(f Finding) bool {
		return f.Cluster == "eu" && f.Subject == "Pod/research/alice-jupyter"
	}) || slices.ContainsFunc(r.Findings.Items, func(f Finding) bool { return f.Cluster == "us" && strings.Contains(f.Subject, "alice") }) {
		t.Errorf("alice's notebook is eu's alone: findings %+v", r.Findings.Items)
	}
	// The timeline is read per cluster: each cluster's teams are its own
	// lines, vision is its own team in eu and ml's in us, and research is
	// ml's in both.
	var series []string
	for _, ts := range r.Timeline {
		series = append(series, ts.Team)
	}
	if want := []string{"eu/ml", "eu/serving", "eu/vision", "us/ml", "us/serving"}; !slices.Equal(series, want) {
		t.Errorf("timeline series %q, want %q", series, want)
	}
}

// TestClusterCSV: the clustered CSV is the single cluster's columns and a
// trailing cluster column; its team rows add up to its cluster rows, and
// those to the fleet row, figure by figure, as the JSON says.
func TestClusterCSV(t *testing.T) {
	r := clusterReport(t, fixturePrices(t))
	var cb, jb bytes.Buffer
	if err := Render(&cb, r, "csv"); err != nil {
		t.Fatal(err)
	}
	if err := Render(&jb, r, "json"); err != nil {
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
	if !slices.Equal(rows[0], append(append(slices.Clone(CSVHeader), "cluster"), CSVLedgerColumns...)) {
		t.Fatalf("header %q, want CSVHeader, cluster and CSVLedgerColumns", rows[0])
	}
	if len(rows) != 1+len(parsed.Teams)+2*len(parsed.Clusters)+1 {
		t.Fatalf("%d rows for %d teams and %d clusters, want header + teams + each cluster's unallocated and total + fleet", len(rows), len(parsed.Teams), len(parsed.Clusters))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	figures := []string{"allocations", "allocated_gpu_hours", "used_gpu_hours", "idle_gpu_hours", "unmeasured_gpu_hours", "cost", "waste", "previous_allocated_gpu_hours", "previous_cost",
		"allocation_cost", "usage_cost"}
	sums := map[string]map[string]float64{} // scope → figure → sum
	perCluster := map[string]map[string]float64{}
	var fleet []string
	for _, row := range rows[1:] {
		scope, cluster := row[col["scope"]], row[col["cluster"]]
		if sums[scope] == nil {
			sums[scope] = map[string]float64{}
		}
		for _, f := range figures {
			v, err := strconv.ParseFloat(row[col[f]], 64)
			if err != nil && !(scope == "unallocated" && row[col[f]] == "") {
				t.Fatalf("%s %s: %v", scope, f, err)
			}
			sums[scope][f] += v
			if scope == "team" || scope == "unallocated" {
				if perCluster[cluster] == nil {
					perCluster[cluster] = map[string]float64{}
				}
				perCluster[cluster][f] += v
			}
		}
		switch scope {
		case "cluster":
			c := parsed.Clusters[slices.IndexFunc(parsed.Clusters, func(c ClusterSummary) bool { return c.Name == cluster })]
			if got, _ := strconv.ParseFloat(row[col["allocated_gpu_hours"]], 64); got != c.AllocatedGPUHours {
				t.Errorf("cluster %s: CSV allocated %v, JSON %v", cluster, got, c.AllocatedGPUHours)
			}
			if got, _ := strconv.ParseFloat(row[col["cost"]], 64); !near(got, c.CapacityCost) {
				t.Errorf("cluster %s: CSV cost %v, the JSON's capacity cost %v", cluster, got, c.CapacityCost)
			}
			for _, f := range figures {
				if v, _ := strconv.ParseFloat(row[col[f]], 64); !near(v, perCluster[cluster][f]) {
					t.Errorf("cluster %s %s: %v, its teams' %v", cluster, f, v, perCluster[cluster][f])
				}
			}
		case "fleet":
			fleet = row
		case "unallocated":
		case "team":
			if cluster != "eu" && cluster != "us" {
				t.Errorf("team row %q names cluster %q", row[col["team"]], cluster)
			}
		default:
			t.Errorf("row of scope %q", scope)
		}
	}
	if fleet == nil || fleet[col["cluster"]] != "" {
		t.Fatalf("fleet row %q, want the last row, without a cluster", fleet)
	}
	for _, f := range figures {
		v, _ := strconv.ParseFloat(fleet[col[f]], 64)
		if !near(sums["team"][f]+sums["unallocated"][f], v) || !near(sums["cluster"][f], v) {
			t.Errorf("%s: teams %v + unallocated %v, clusters %v, fleet %v", f, sums["team"][f], sums["unallocated"][f], sums["cluster"][f], v)
		}
	}
	if v, _ := strconv.ParseFloat(fleet[col["allocated_gpu_hours"]], 64); v != parsed.Cluster.AllocatedGPUHours {
		t.Errorf("fleet allocated: CSV %v, JSON %v", v, parsed.Cluster.AllocatedGPUHours)
	}
	if v, _ := strconv.ParseFloat(fleet[col["cost"]], 64); !near(v, parsed.Cluster.CapacityCost) {
		t.Errorf("fleet cost: CSV %v, the JSON's capacity cost %v", v, parsed.Cluster.CapacityCost)
	}
}

// TestOneClusterHasNoClusterColumn: a report of one cluster names none,
// in any format (the goldens hold the rest of it).
func TestOneClusterHasNoClusterColumn(t *testing.T) {
	r := fixtureReport(t, teamsInventory(), fixturePrices(t))
	var jb bytes.Buffer
	if err := Render(&jb, r, "json"); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(jb.Bytes(), []byte(`"clusters"`)) || bytes.Count(jb.Bytes(), []byte(`"cluster"`)) != 1 {
		t.Errorf("the JSON of one cluster names clusters beyond the fleet summary")
	}
	for _, s := range r.sections() {
		if slices.Contains(s.Header, "Cluster") || s.ID == "clusters" {
			t.Errorf("section %s has a cluster column", s.ID)
		}
	}
}

// TestClusterWebhookText: the webhook's message of a clustered report has
// the clusters' summary and names each team's cluster.
func TestClusterWebhookText(t *testing.T) {
	text, err := WebhookText(clusterReport(t, fixturePrices(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Fleet summary", "## Clusters\n", "| eu | 6 | 1,008.0 |", "| Cluster | Team | Namespaces |", "| us | ml | training, vision |"} {
		if !strings.Contains(text, want) {
			t.Errorf("webhook text lacks %q", want)
		}
	}
}

// TestClustersOfTheSameNode: a store where one cluster's series carry the
// label and another's do not, with the same node and GPU names in each.
// A GPU's allocations are its own cluster's: eu's GPU is held whole, the
// unlabelled one is free, and neither is counted against the other.
func TestClustersOfTheSameNode(t *testing.T) {
	w := fleet.Window{Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, Step: time.Minute}
	gpu := func(cluster string) fleet.GPU {
		return fleet.GPU{GPUKey: fleet.GPUKey{Cluster: cluster, Node: "node-1", UUID: "GPU-1"}, Model: "NVIDIA L4",
			ReportedHours: 168, AvgUtilization: 0.5, UtilizationSteps: 10080, Steps: 10080, Coverage: 1}
	}
	cur := &fleet.Result{Window: w, ExpectedSteps: 10080, GPUs: []fleet.GPU{gpu(""), gpu("eu")},
		Allocations: []fleet.Allocation{{AllocationKey: fleet.AllocationKey{Cluster: "eu", Node: "node-1", Namespace: "ml", Pod: "p", UUID: "GPU-1"},
			Model: "NVIDIA L4", AllocatedGPUHours: 168, AvgUtilization: 0.5, UtilizationSteps: 10080}}}
	prices := fixturePrices(t)
	r := buildReport(Input{Schema: "native", Current: cur, Previous: &fleet.Result{Window: w}}, prices)
	if len(r.Clusters) != 2 || r.Clusters[0].Name != "" || r.Clusters[1].Name != "eu" {
		t.Fatalf("clusters %+v, want the unlabelled one and eu", r.Clusters)
	}
	unlabelled, eu := r.Clusters[0], r.Clusters[1]
	if unlabelled.AllocatedGPUHours != 0 || unlabelled.UnallocatedGPUHours != 168 || eu.AllocatedGPUHours != 168 || eu.UnallocatedGPUHours != 0 {
		t.Errorf("unlabelled %g allocated %g free, eu %g allocated %g free; want 0/168 and 168/0",
			unlabelled.AllocatedGPUHours, unlabelled.UnallocatedGPUHours, eu.AllocatedGPUHours, eu.UnallocatedGPUHours)
	}
	if r.Cluster.UnallocatedGPUHours != 168 || !near(r.Cluster.UnallocatedCost, 168*0.8) || !near(r.Cluster.EstimatedWaste, 84*0.8+168*0.8) {
		t.Errorf("fleet %+v, want 168 GPU-h free at $0.80 and 84 idle", r.Cluster)
	}
	if unlabelled.Previous != nil || r.Cluster.Previous != nil {
		t.Errorf("previous %v, %v without last week's data", unlabelled.Previous, r.Cluster.Previous)
	}
	// The fleet by model has a row per cluster, the tables name the
	// unlabelled cluster in words.
	if len(r.Fleet) != 2 || r.Fleet[0].AllocatedGPUHours != 0 || r.Fleet[1].AllocatedGPUHours != 168 {
		t.Errorf("fleet %+v, want the unlabelled L4 free and eu's held", r.Fleet)
	}
	var md bytes.Buffer
	if err := Render(&md, r, "markdown"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), `| (no cluster label) | 1 | 168.0 |`) {
		t.Errorf("markdown does not name the unlabelled cluster:\n%s", md.String())
	}
}

// TestClusterConsolidation: each cluster is planned apart, so a model's
// pool of two clusters is two rows, each naming its cluster; one cluster's
// plan has no cluster column.
func TestClusterConsolidation(t *testing.T) {
	r := &Report{Consolidation: &Consolidation{GPUsToday: 12, GPUsNeeded: 7, Pools: []ConsolidationPool{
		{Cluster: "eu", Model: "H100-80GB", GPUsToday: 3, GPUsNeeded: 2},
		{Cluster: "us", Model: "H100-80GB", GPUsToday: 3, GPUsNeeded: 1},
	}}}
	s := r.consolidationSection()
	if !slices.Equal(s.Header[:2], []string{"Cluster", "Model"}) || len(s.Rows) != 2 || s.Rows[0][0] != "eu" || s.Rows[1][0] != "us" {
		t.Errorf("header %q rows %q, want a Cluster column naming eu and us", s.Header, s.Rows)
	}
	r.Consolidation.Pools = r.Consolidation.Pools[:1]
	r.Consolidation.Pools[0].Cluster = ""
	if s := r.consolidationSection(); s.Header[0] != "Model" || s.Rows[0][0] != "H100-80GB" {
		t.Errorf("one cluster's plan: header %q rows %q, want no cluster column", s.Header, s.Rows)
	}
}
