package reclaim

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/internal/promdur"
	"github.com/gpulens/gpulens/vocab"
)

// Preview is what one reclaim cycle at the analysis's end would do to
// objs, for the report's "Reclaim (dry run)" section: Decide's verdicts,
// not a copy of its rules, with each workload's GPUs (gpus, by Ref) and
// the money a month its reclaim frees, from the findings' prices (the
// report's price table). A reclaim is what Decide announces now and acts
// on after the grace period. Every namespace of objs and of the findings
// is taken as opted in. It is pure.
func Preview(p Policy, a Analysis, objs []Object, gpus map[Ref]int) *report.ReclaimPreview {
	optedIn := map[string]bool{}
	objs = slices.Clone(objs)
	for i := range objs {
		objs[i].OptedIn = true
		optedIn[objs[i].Namespace] = true
	}
	money := map[Ref]*report.ReclaimTotal{}
	for _, f := range a.Findings {
		if f.Cluster != a.Cluster || f.Workload == "" {
			continue
		}
		r := Ref{f.Namespace, f.WorkloadKind, f.Workload}
		optedIn[r.Namespace] = true
		if f.Kind != vocab.KindIdleAllocation && f.Kind != vocab.KindUnderusedGPU {
			continue
		}
		m := money[r]
		if m == nil {
			m = &report.ReclaimTotal{CostKnown: true}
			money[r] = m
		}
		m.MonthlyCost += f.MonthlyCostUSD
		m.CostKnown = m.CostKnown && f.CostKnown
	}
	out := &report.ReclaimPreview{Policy: &report.ReclaimPolicy{IdleFor: promdur.Format(p.Idle.For), MaxAvgUtilization: p.Idle.MaxAvgUtilization,
		MaxP95Utilization: p.Idle.MaxP95Utilization, MinCoverage: p.Idle.MinCoverage, GracePeriod: promdur.Format(p.GracePeriod)},
		Reclaim: &report.ReclaimTotal{CostKnown: true}, NotifyOnly: &report.ReclaimTotal{CostKnown: true}}
	// The preview has no rate limit: it says what the policy would
	// reclaim, and the limit only spreads that over hours.
	for _, d := range Decide(p, a, objs, optedIn, a.End, len(objs)) {
		w := report.ReclaimWorkload{Cluster: a.Cluster, Namespace: d.Namespace, Kind: d.Kind, Name: d.Name, GPUs: gpus[d.Ref], Reason: d.Reason, CostKnown: true}
		var total *report.ReclaimTotal
		switch d.Action {
		case Announce, Wait, Reclaim:
			w.Action, total = report.ReclaimActionReclaim, out.Reclaim
			w.Reason = fmt.Sprintf("idle over the last %s (%s): announced, then %s after %s", d.Evidence.Window, d.Evidence.describe(), verb(d.Kind), promdur.Format(p.GracePeriod))
		case NotifyOnly:
			w.Action, total = report.ReclaimActionNotifyOnly, out.NotifyOnly
			w.Reason = fmt.Sprintf("idle over the last %s (%s); %s", d.Evidence.Window, d.Evidence.describe(), d.Reason)
		default:
			w.Action = report.ReclaimActionSkip
		}
		if total != nil {
			if m := money[d.Ref]; m != nil {
				w.MonthlyCost, w.CostKnown = m.MonthlyCost, m.CostKnown
			} else {
				w.CostKnown = false
			}
			total.Workloads++
			total.GPUs += w.GPUs
			total.MonthlyCost += w.MonthlyCost
			total.CostKnown = total.CostKnown && w.CostKnown
		}
		out.Workloads = append(out.Workloads, w)
	}
	rank := map[string]int{report.ReclaimActionReclaim: 0, report.ReclaimActionNotifyOnly: 1, report.ReclaimActionSkip: 2}
	slices.SortStableFunc(out.Workloads, func(x, y report.ReclaimWorkload) int {
		return cmp.Or(cmp.Compare(rank[x.Action], rank[y.Action]), cmp.Compare(y.MonthlyCost, x.MonthlyCost),
			cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Name, y.Name))
	})
	return out
}
