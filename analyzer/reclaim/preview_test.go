package reclaim

import (
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/report"
)

// TestPreview: one analysis at `now` over a 7-day window, judged under
// the default policy (24h at most 2% average and 5% p95, 95% held), every
// namespace opted in whatever its objects say.
//   - team-a/Deployment/nb: idle on 1 GPU at $1825 a month (notebook()):
//     reclaimed, and its $1825 freed;
//   - team-a/Deployment/nb2: idle on 2 GPUs of a model without a price:
//     reclaimed, its money unknown (not $0), and the total's with it;
//   - lab/Pod/scratch: idle, a bare pod: notify-only, $730;
//   - serve/StatefulSet/api: no finding: skipped as in use;
//   - team-a/Deployment/young: idle but 6h old: skipped as younger;
//   - team-a/Deployment/far: idle on a node whose data stopped: skipped.
func TestPreview(t *testing.T) {
	nb, a := notebook()
	nb.OptedIn = false // the preview opts every namespace in itself
	a.End, a.Window = now, 7*24*time.Hour
	idle := func(ns, kind, name, node string, gpus, cost float64, known bool) findings.Finding {
		return findings.Finding{Kind: "idle-allocation", Namespace: ns, Workload: name, WorkloadKind: kind, WorkloadSource: findings.SourceAPI, Node: node,
			Evidence: map[string]float64{"avg_utilization": 0.005, "p95_utilization": 0.01, "coverage": 1, "gpus": gpus}, MonthlyCostUSD: cost, CostKnown: known}
	}
	a.Findings = append(a.Findings,
		idle("team-a", KindDeployment, "nb2", "n2", 2, 0, false),
		idle("lab", "Pod", "scratch", "n1", 1, 730, true),
		idle("team-a", KindDeployment, "young", "n1", 1, 1825, true),
		idle("team-a", KindDeployment, "far", "n3", 1, 1825, true))
	a.Stale = map[string]bool{"n3": true}
	obj := func(ns, kind, name, node string, age time.Duration) Object {
		return Object{Ref: Ref{ns, kind, name}, Created: now.Add(-age), Replicas: 1, Nodes: []string{node}}
	}
	objs := []Object{nb, obj("team-a", KindDeployment, "nb2", "n2", 72*time.Hour), obj("serve", KindStatefulSet, "api", "n1", 72*time.Hour),
		obj("team-a", KindDeployment, "young", "n1", 6*time.Hour), obj("team-a", KindDeployment, "far", "n3", 72*time.Hour)}
	gpus := map[Ref]int{nb.Ref: 1, {"team-a", KindDeployment, "nb2"}: 2, {"lab", "Pod", "scratch"}: 1, {"serve", KindStatefulSet, "api"}: 4,
		{"team-a", KindDeployment, "young"}: 1, {"team-a", KindDeployment, "far"}: 1}

	p := Preview(DefaultPolicy(), a, objs, gpus)
	type row struct {
		name, action string
		gpus         int
		cost         float64
		known        bool
		reason       string
	}
	want := []row{
		{"nb", "reclaim", 1, 1825, true, ""},
		{"nb2", "reclaim", 2, 0, false, ""},
		{"scratch", "notify-only", 1, 730, true, ""},
		{"api", "skip", 4, 0, true, "in use: the analysis finds it neither idle nor underused"},
		{"far", "skip", 1, 0, true, "the data of node n3 stops before the window's end (its exporter or the store is down)"},
		{"young", "skip", 1, 0, true, "younger (6h) than the idle window (1d)"},
	}
	if len(p.Workloads) != len(want) {
		t.Fatalf("%d workloads, want %d: %+v", len(p.Workloads), len(want), p.Workloads)
	}
	for i, w := range want {
		g := p.Workloads[i]
		if g.Name != w.name || g.Action != w.action || g.GPUs != w.gpus || g.MonthlyCost != w.cost || g.CostKnown != w.known || (w.reason != "" && g.Reason != w.reason) {
			t.Errorf("row %d: %+v, want %+v", i, g, w)
		}
	}
	if got, want := *p.Reclaim, (report.ReclaimTotal{Workloads: 2, GPUs: 3, MonthlyCost: 1825, CostKnown: false}); got != want {
		t.Errorf("reclaim total %+v, want %+v", got, want)
	}
	if got, want := *p.NotifyOnly, (report.ReclaimTotal{Workloads: 1, GPUs: 1, MonthlyCost: 730, CostKnown: true}); got != want {
		t.Errorf("notify-only total %+v, want %+v", got, want)
	}
	if p.Reclaimed != nil {
		t.Errorf("a preview says nothing of what was reclaimed: %+v", p.Reclaimed)
	}
}
