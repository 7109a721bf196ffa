package session

import (
	"context"
	"slices"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/pipeline"
	"github.com/gpulens/gpulens/analyzer/report"
)

// Report analyses the window (with timeline points of utilization over
// time) and plans it for the consolidation section: the report that
// gpulens report, gpulens demo and gpulens serve all give. The analysis is
// returned too, for what a command says beside the report.
//
// The plan is made from the use the analysis's passes folded: the window
// is read once, for both. What gpulens reclaim did in the window is read
// after, from the reclaimer's own series (Reclaimed).
func (s *Session) Report(ctx context.Context, timeline int) (*report.Report, *pipeline.Analysis, error) {
	rd, err := s.analyze(ctx, readOptions{timeline: timeline, lanes: true})
	if err != nil {
		return nil, nil, err
	}
	a := rd.Analysis
	in := reportInput(a)
	in.CostBasis = s.cfg.CostBasis
	r := report.Build(in, s.prices)
	r.Consolidation = s.consolidation(ctx, rd)
	r.Savings = report.SavingsOf(r.Consolidation)
	r.ReclaimPreview = s.Reclaimed(ctx)
	return r, a, nil
}

// reportInput is what the report reads of an analysis: its results and
// the money it built.
func reportInput(a *pipeline.Analysis) report.Input {
	return report.Input{Schema: a.Schema.Name(), Current: a.Current, Previous: a.Previous, Comparable: a.Comparable,
		Findings: a.Findings, Team: a.TeamOf, Timeline: a.Timeline, Notes: a.Notes, Money: a.Money}
}

// consolidation plans the window for the report's "Consolidation" section.
// A plan that cannot be made is said in the section, never a failed
// report: the report's figures do not depend on it.
func (s *Session) consolidation(ctx context.Context, rd *read) *report.Consolidation {
	fs := rd.Findings.Findings
	if fs == nil {
		fs = []findings.Finding{} // none to act on: the plan is today's fleet, analysed once
	}
	p, err := s.Plan(ctx, PlanOptions{advice: fs, from: rd})
	if err != nil {
		return &report.Consolidation{Unavailable: err.Error()}
	}
	c := &report.Consolidation{GPUsToday: p.GPUsToday, GPUsNeeded: p.GPUsNeeded, NodesToday: p.NodesToday, NodesNeeded: p.NodesNeeded,
		HeadroomGPUs: p.HeadroomGPUs, MonthlySaving: p.MonthlySavingUSD, Differences: shapeDifferences(fs, p),
		CapacityFreedGPUs: p.CapacityFreedGPUs, CapacityFreedMonthly: p.CapacityFreedMonthlyUSD, AsIs: p.AsIs, Released: p.Released}
	for _, pp := range p.Pools {
		c.SavingKnown = c.SavingKnown || pp.MonthlySavingUSD != nil
		if pp.PriceSource != "" && !slices.Contains(c.PriceSources, pp.PriceSource) {
			c.PriceSources = append(c.PriceSources, pp.PriceSource)
		}
		c.ReplaySteps = max(c.ReplaySteps, pp.Replay.Steps)
		c.OvercommittedSteps += pp.Replay.OvercommittedSteps
		c.Pools = append(c.Pools, report.ConsolidationPool{Cluster: pp.Cluster, Model: pp.Model, GPUsToday: pp.GPUsToday, GPUsNeeded: pp.GPUsNeeded,
			NodesToday: pp.NodesToday, NodesNeeded: pp.NodesNeeded, HeadroomGPUs: pp.HeadroomGPUs,
			MonthlySaving: pp.MonthlySavingUSD, CapacityFreedGPUs: pp.CapacityFreedGPUs, CapacityFreedMonthly: pp.CapacityFreedMonthlyUSD})
	}
	return c
}
