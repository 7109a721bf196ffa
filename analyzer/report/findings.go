package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/findings"
)

var severityRank = map[findings.Severity]int{findings.Critical: 0, findings.Warning: 1, findings.Info: 2}

// findingsOf lists the findings most severe first, and the recommendations
// that save money, most savings first. A recommendation that costs more
// (Reliability) is a finding's remedy, not a saving, so it is not ranked.
// savingsByCluster are the findings' monthly savings per cluster, which
// sum to their MonthlySavings.
func findingsOf(a Input, teamOf func(cluster, namespace string) string) (recs []Recommendation, fs Findings, savingsByCluster map[string]float64) {
	fs = Findings{Items: []Finding{}, Skipped: []string{}}
	recs = []Recommendation{}
	savingsByCluster = map[string]float64{}
	if a.Findings == nil {
		return recs, fs, savingsByCluster
	}
	fs.Skipped = append(fs.Skipped, a.Findings.Skipped...)
	for _, f := range a.Findings.Findings {
		team := f.Team
		if f.Namespace != "" {
			team = teamOf(f.Cluster, f.Namespace)
		}
		switch f.Severity {
		case findings.Critical:
			fs.Critical++
		case findings.Warning:
			fs.Warning++
		default:
			fs.Info++
		}
		fs.Items = append(fs.Items, Finding{
			Cluster: f.Cluster, Severity: string(f.Severity), Kind: f.Kind, Team: team, Namespace: f.Namespace, Subject: subject(f),
			AllocationPath: f.AllocationPath, Claims: f.Claims, Summary: f.Summary, Confidence: f.Confidence, MonthlyCost: f.MonthlyCostUSD, MonthlySavings: f.MonthlySavingsUSD,
		})
		rec := f.Recommendation
		if rec == nil || !f.CostKnown || f.MonthlySavingsUSD <= 0 {
			continue
		}
		fs.MonthlySavings += f.MonthlySavingsUSD
		savingsByCluster[f.Cluster] += f.MonthlySavingsUSD
		subjectOf := rec.Workload.String()
		if rec.Workload.Name == "" {
			// A node's capacity, not a workload's.
			subjectOf = "node " + f.Node
		}
		recs = append(recs, Recommendation{
			Cluster: f.Cluster, Team: team, Namespace: f.Namespace, Workload: subjectOf, Kind: f.Kind, Action: string(rec.Action),
			From: rec.From, To: rec.To, Allocation: rec.Allocation, Claim: rec.Claim, Summary: rec.Summary, MonthlySavings: f.MonthlySavingsUSD, MonthlyCurrentUSD: f.MonthlyCostUSD,
		})
	}
	slices.SortStableFunc(fs.Items, func(x, y Finding) int {
		return cmp.Or(cmp.Compare(severityRank[findings.Severity(x.Severity)], severityRank[findings.Severity(y.Severity)]),
			cmp.Compare(y.MonthlySavings, x.MonthlySavings), strings.Compare(x.Kind, y.Kind),
			strings.Compare(x.Subject, y.Subject), strings.Compare(x.Cluster, y.Cluster), strings.Compare(x.Summary, y.Summary))
	})
	slices.SortStableFunc(recs, func(x, y Recommendation) int {
		return cmp.Or(cmp.Compare(y.MonthlySavings, x.MonthlySavings), strings.Compare(x.Workload, y.Workload),
			strings.Compare(x.Cluster, y.Cluster), strings.Compare(x.Summary, y.Summary))
	})
	if len(recs) > TopRecommendations {
		recs = recs[:TopRecommendations]
	}
	return recs, fs, savingsByCluster
}

// subject names what a finding is about, most specific first.
func subject(f findings.Finding) string {
	switch {
	case f.Workload != "":
		s := f.Namespace + "/" + f.Workload
		if f.WorkloadKind != "" {
			s = f.WorkloadKind + "/" + s
		}
		return s
	case f.Pod != "":
		return "Pod/" + f.Namespace + "/" + f.Pod
	case f.GPUUUID != "":
		s := f.Node + "/" + f.GPUUUID
		if f.GPUInstance != "" {
			s += "/" + f.GPUInstance
		}
		return s
	case f.Node != "":
		return f.Node
	default:
		return f.Namespace
	}
}
