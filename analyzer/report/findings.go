package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/rollup"
)

var severityRank = map[findings.Severity]int{findings.Critical: 0, findings.Warning: 1, findings.Info: 2}

// findingsOf lists the findings most severe first, and the recommendations
// that save money, most savings first. A recommendation that costs more
// (Reliability) is a finding's remedy, not a saving, so it is not ranked.
// savingsByCluster are the findings' monthly savings per cluster, which
// sum to their MonthlySavings.
//
// A change that saves GPU time of a model without a price is listed too,
// after those that save money, with its savings unknown (CostKnown
// false), and counted in Findings.SavingsUnpriced (per cluster in
// unpricedByCluster): the sum of the savings leaves it out and says so,
// never counting it as $0.
func findingsOf(a Input, teamOf func(cluster, namespace string) string) (recs []Recommendation, fs Findings, savingsByCluster map[string]float64,
	unpricedByCluster map[string]*rollup.Unpriced) {
	fs = Findings{Items: []Finding{}, Skipped: []string{}}
	recs = []Recommendation{}
	savingsByCluster = map[string]float64{}
	unpricedByCluster = map[string]*rollup.Unpriced{}
	if a.Findings == nil {
		return recs, fs, savingsByCluster, unpricedByCluster
	}
	priced := map[string]int{} // findings with known savings, per cluster
	pricedAll := 0
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
			CostKnown: f.CostKnown,
		})
		rec := f.Recommendation
		if rec == nil {
			continue
		}
		if !f.CostKnown {
			if rec.Reliability || rec.RecommendedShare >= rec.CurrentShare {
				continue // saves no GPU time: nothing unknown to count
			}
			fs.SavingsUnpriced = rollup.AddUnpriced(fs.SavingsUnpriced, f.Model, 0, 0, 1)
			unpricedByCluster[f.Cluster] = rollup.AddUnpriced(unpricedByCluster[f.Cluster], f.Model, 0, 0, 1)
		} else if f.MonthlySavingsUSD <= 0 {
			fs.ReliabilityMonthlyCost -= f.MonthlySavingsUSD
			continue
		} else {
			fs.MonthlySavings += f.MonthlySavingsUSD
			savingsByCluster[f.Cluster] += f.MonthlySavingsUSD
			priced[f.Cluster]++
			pricedAll++
		}
		subjectOf := rec.Workload.String()
		if rec.Workload.Name == "" {
			// A node's capacity, not a workload's.
			subjectOf = "node " + f.Node
		}
		recs = append(recs, Recommendation{
			Cluster: f.Cluster, Team: team, Namespace: f.Namespace, Workload: subjectOf, Kind: f.Kind, Action: string(rec.Action),
			From: rec.From, To: rec.To, Allocation: rec.Allocation, Claim: rec.Claim, Summary: rec.Summary, MonthlySavings: f.MonthlySavingsUSD, MonthlyCurrentUSD: f.MonthlyCostUSD,
			CostKnown: f.CostKnown, Model: f.Model,
		})
	}
	if u := fs.SavingsUnpriced; u != nil {
		u.Partial = pricedAll > 0
	}
	for c, u := range unpricedByCluster {
		u.Partial = priced[c] > 0
	}
	slices.SortStableFunc(fs.Items, func(x, y Finding) int {
		return cmp.Or(cmp.Compare(severityRank[findings.Severity(x.Severity)], severityRank[findings.Severity(y.Severity)]),
			cmp.Compare(y.MonthlySavings, x.MonthlySavings), cmp.Compare(x.Kind, y.Kind),
			strings.Compare(x.Subject, y.Subject), strings.Compare(x.Cluster, y.Cluster), strings.Compare(x.Summary, y.Summary))
	})
	slices.SortStableFunc(recs, func(x, y Recommendation) int {
		// Known savings first, largest first; unknown ones after them.
		return cmp.Or(-boolCompare(x.CostKnown, y.CostKnown), cmp.Compare(y.MonthlySavings, x.MonthlySavings), strings.Compare(x.Workload, y.Workload),
			strings.Compare(x.Cluster, y.Cluster), strings.Compare(x.Summary, y.Summary))
	})
	if len(recs) > TopRecommendations {
		recs = recs[:TopRecommendations]
	}
	return recs, fs, savingsByCluster, unpricedByCluster
}

// boolCompare orders false before true.
func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
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
