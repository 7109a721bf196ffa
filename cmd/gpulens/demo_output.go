package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/gpulens/gpulens/analyzer/query"
)

// demoSummary is what the simulation did, for the header and the JSON.
type demoSummary struct {
	Nodes           int     `json:"nodes"`
	GPUs            int     `json:"gpus"`
	Steps           int     `json:"steps"`
	Samples         int     `json:"samples"`
	SimulateSeconds float64 `json:"simulate_seconds"`
	AnalyzeSeconds  float64 `json:"analyze_seconds"`
	DataDir         string  `json:"data_dir,omitempty"`
}

// teamFigures sums allocations per namespace.
type teamFigures struct {
	Namespace         string  `json:"namespace"`
	Allocations       int     `json:"allocations"`
	AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
	UsedGPUHours      float64 `json:"used_gpu_hours"`
	Efficiency        float64 `json:"efficiency"`
}

func perTeam(res *query.Result) []teamFigures {
	by := map[string]*teamFigures{}
	for _, a := range res.Allocations {
		t := by[a.Namespace]
		if t == nil {
			t = &teamFigures{Namespace: a.Namespace}
			by[a.Namespace] = t
		}
		t.Allocations++
		t.AllocatedGPUHours += a.AllocatedGPUHours
		// Utilization is of the allocation's own share, so used GPU-hours
		// are allocated GPU-hours scaled by it.
		t.UsedGPUHours += a.AllocatedGPUHours * min(1, a.AvgUtilization)
	}
	out := make([]teamFigures, 0, len(by))
	for _, t := range by {
		if t.AllocatedGPUHours > 0 {
			t.Efficiency = t.UsedGPUHours / t.AllocatedGPUHours
		}
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b teamFigures) int {
		return cmp.Or(cmp.Compare(b.AllocatedGPUHours, a.AllocatedGPUHours), cmp.Compare(a.Namespace, b.Namespace))
	})
	return out
}

func writeDemoJSON(w io.Writer, sum demoSummary, res *query.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Simulation demoSummary   `json:"simulation"`
		Teams      []teamFigures `json:"teams"`
		Analysis   *query.Result `json:"analysis"`
	}{sum, perTeam(res), res})
}

func writeDemoTable(w io.Writer, sum demoSummary, res *query.Result) error {
	fmt.Fprintf(w, "Simulated %d nodes, %d GPUs for %s to %s (%d steps, %d samples) in %.1fs.\n",
		sum.Nodes, sum.GPUs, res.Window.Start.Format("2006-01-02 15:04"), res.Window.End.Format("2006-01-02 15:04 MST"),
		sum.Steps, sum.Samples, sum.SimulateSeconds)
	fmt.Fprintf(w, "Analyzed with the %s schema: %d PromQL queries in %.1fs.\n\n", res.Schema, res.QueryCount, sum.AnalyzeSeconds)

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tALLOCATIONS\tALLOCATED GPU-H\tUSED GPU-H\tEFFICIENCY")
	for _, t := range perTeam(res) {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%.0f%%\n", t.Namespace, t.Allocations, t.AllocatedGPUHours, t.UsedGPUHours, 100*t.Efficiency)
	}
	tw.Flush()
	fmt.Fprintln(w)

	gpus := slices.Clone(res.GPUs)
	slices.SortFunc(gpus, func(a, b query.GPU) int { return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.UUID, b.UUID)) })
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tGPU\tMODEL\tSHARING\tALLOCATED-H\tUNALLOCATED-H\tTENANTS\tAVG UTIL")
	for _, g := range gpus {
		sharing := cmp.Or(g.Sharing, "-")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.0f\t%.0f\t%d\t%.0f%%\n", g.Node, shortUUID(g.UUID), g.Model, sharing,
			g.AllocatedHours, g.UnallocatedHours, g.CoTenants, 100*g.AvgUtilization)
	}
	tw.Flush()
	for _, n := range res.Notes {
		fmt.Fprintf(w, "\nnote: %s", n)
	}
	if len(res.Notes) > 0 {
		fmt.Fprintln(w)
	}
	if sum.DataDir != "" {
		fmt.Fprintf(w, "\nThe TSDB is kept in %s.\n", sum.DataDir)
	}
	return nil
}

// shortUUID keeps tables narrow; the JSON has the full UUID.
func shortUUID(u string) string {
	if len(u) > 12 {
		return u[:12]
	}
	return u
}
