package report

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/rollup"
)

var update = flag.Bool("update", false, "rewrite testdata/report.golden.*")

var weekEnd = time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)

// fixturePrices is testdata/prices.yaml over the default table.
func fixturePrices(t testing.TB) *price.Prices {
	t.Helper()
	data, err := os.ReadFile("testdata/prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := price.DefaultPrices().Override(data, "testdata/prices.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// teamsInventory labels research and training as team ml, and inference
// and search as serving; vision is unlabelled and stays its own team.
func teamsInventory() *inventory.Inventory {
	return &inventory.Inventory{Available: true, Namespaces: map[string]inventory.Namespace{
		"research":  {Name: "research", Team: "ml"},
		"training":  {Name: "training", Team: "ml"},
		"inference": {Name: "inference", Team: "serving"},
		"search":    {Name: "search", Team: "serving"},
		"vision":    {Name: "vision"},
	}}
}

// fixtureReport analyses the last week of the pipeline's fixture fleet.
func fixtureReport(t testing.TB, inv *inventory.Inventory, prices *price.Prices) *Report {
	t.Helper()
	src, _ := pipelinetest.Open(t, "../pipeline/testdata/fleet.yaml")
	a, err := pipeline.Run(context.Background(), pipeline.Options{Source: src, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd,
		Inventory: inv, Prices: prices, TimelinePoints: 28})
	if err != nil {
		t.Fatal(err)
	}
	return buildReport(Input{Schema: a.Schema.Name(), Current: a.Current, Previous: a.Previous, Comparable: a.Comparable,
		Findings: a.Findings, Team: func(_, ns string) string { return inv.Team(ns) }, Timeline: a.Timeline, Notes: a.Notes}, prices)
}

// buildReport is what an analysis and its report do together: the money
// built once (rollup.Build, as pipeline.Run builds it), then the report
// that renders it. An Input of a pipeline analysis brings its own.
func buildReport(in Input, prices *price.Prices) *Report {
	if in.Money == nil {
		var prev *fleet.Result
		if in.Comparable {
			prev = in.Previous
		}
		in.Money = rollup.Build(rollup.Input{Current: in.Current, Previous: prev, Team: in.Team, UsedWithoutPod: in.Findings.UsedWithoutPod}, prices)
	}
	return Build(in, prices)
}
