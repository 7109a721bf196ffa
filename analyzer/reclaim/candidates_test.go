package reclaim

import (
	"errors"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/vocab"
)

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) string { return now.Add(-d).Format(time.RFC3339) }

// notebook is an idle Deployment of one GPU, two days old, in an opted-in
// namespace, and the analysis that finds it idle: 0.5% average, 1% p95,
// 99% of a 24h window, at $2.50 an hour ($1825 a 730-hour month).
func notebook() (Object, Analysis) {
	o := Object{Ref: Ref{"team-a", KindDeployment, "nb"}, Created: now.Add(-48 * time.Hour), Replicas: 1, OptedIn: true,
		Nodes: []string{"n1"}, Annotations: map[string]string{}}
	a := Analysis{End: now.Add(-time.Minute), Window: 24 * time.Hour, Stale: map[string]bool{}, Findings: []findings.Finding{{
		Kind: "idle-allocation", Namespace: "team-a", Workload: "nb", WorkloadKind: KindDeployment, WorkloadSource: findings.SourceAPI,
		Node: "n1", Evidence: map[string]float64{"avg_utilization": 0.005, "p95_utilization": 0.01, "coverage": 0.99, "gpus": 1},
		MonthlyCostUSD: 1825, CostKnown: true,
	}}}
	return o, a
}

func TestDecide(t *testing.T) {
	p := DefaultPolicy() // 24h, at most 2% average and 5% p95, 95% coverage, 4h grace
	for _, tc := range []struct {
		name   string
		change func(*Object, *Analysis)
		budget int
		want   Action
		reason string
		at     time.Time
	}{
		{"idle: announced, due after the 4h grace", nil, 1, Announce, "idle", now.Add(4 * time.Hour)},
		{"pending 3h: waits 1h more", func(o *Object, _ *Analysis) { o.Annotations[PendingSinceAnnotation] = ago(3 * time.Hour) }, 1, Wait, "in its grace period", now.Add(time.Hour)},
		{"pending 4h: reclaimed", func(o *Object, _ *Analysis) { o.Annotations[PendingSinceAnnotation] = ago(4 * time.Hour) }, 1, Reclaim, "idle past its grace period", now},
		{"pending 5h, no budget left", func(o *Object, _ *Analysis) { o.Annotations[PendingSinceAnnotation] = ago(5 * time.Hour) }, 0, Wait, "rate limit reached (10 an hour)", now.Add(-time.Hour)},
		{"opted out", func(o *Object, _ *Analysis) { o.Annotations[OptOutAnnotation] = "disabled" }, 1, Skip, "opted out (gpulens.io/reclaim: disabled)", time.Time{}},
		{"opted out while pending: cancelled", func(o *Object, _ *Analysis) {
			o.Annotations[OptOutAnnotation] = "disabled"
			o.Annotations[PendingSinceAnnotation] = ago(time.Hour)
		}, 1, Cancel, "opted out (gpulens.io/reclaim: disabled)", time.Time{}},
		{"namespace not opted in", func(o *Object, _ *Analysis) { o.OptedIn = false }, 1, Skip, "namespace not opted in (gpulens.io/reclaim=enabled)", time.Time{}},
		{"younger than the window", func(o *Object, _ *Analysis) { o.Created = now.Add(-23 * time.Hour) }, 1, Skip, "younger (23h) than the idle window (1d)", time.Time{}},
		{"busy while pending: cancelled", func(o *Object, a *Analysis) {
			o.Annotations[PendingSinceAnnotation] = ago(time.Hour)
			a.Findings[0].Kind, a.Findings[0].Evidence["avg_utilization"], a.Findings[0].Evidence["p95_utilization"] = "underused-gpu", 0.3, 0.6
		}, 1, Cancel, "in use: 30.0% average utilisation over 1d (idle is at most 2.0%)", time.Time{}},
		{"a burst above the p95", func(_ *Object, a *Analysis) { a.Findings[0].Evidence["p95_utilization"] = 0.2 }, 1, Skip, "in use: 20.0% p95 utilisation over 1d (idle is at most 5.0%)", time.Time{}},
		// Memory activity (signals.MemoryActivity): the workload's GPU moved
		// memory 30% of the window while its SMs idled (a data loader).
		{"memory busy, compute idle", func(_ *Object, a *Analysis) {
			a.Findings[0].GPUs = []string{"GPU-a"}
			a.MemoryActivity = map[string]float64{"GPU-a": 0.3, "GPU-b": 0}
		}, 1, Skip, "in use: 30.0% average memory activity over 1d (idle is at most 2.0%)", time.Time{}},
		{"memory quiet too", func(_ *Object, a *Analysis) {
			a.Findings[0].GPUs = []string{"GPU-a"}
			a.MemoryActivity = map[string]float64{"GPU-a": 0.01, "GPU-b": 0.9}
		}, 1, Announce, "idle", now.Add(4 * time.Hour)},
		{"a MIG instance is judged by its own activity, not its GPU's", func(_ *Object, a *Analysis) {
			a.Findings[0].GPUUUID, a.Findings[0].GPUInstance, a.Findings[0].GPUs = "GPU-a", "3", nil
			a.MemoryActivity = map[string]float64{"GPU-a": 0.5, "GPU-a/3": 0.25}
		}, 1, Skip, "in use: 25.0% average memory activity over 1d (idle is at most 2.0%)", time.Time{}},
		{"no memory activity in the store: utilisation alone", func(_ *Object, a *Analysis) {
			a.Findings[0].GPUs = []string{"GPU-a"}
			a.MemoryActivity = map[string]float64{}
		}, 1, Announce, "idle", now.Add(4 * time.Hour)},
		{"no finding: busy", func(_ *Object, a *Analysis) { a.Findings = nil }, 1, Skip, "in use: the analysis finds it neither idle nor underused", time.Time{}},
		{"another cluster's finding is not this one's", func(_ *Object, a *Analysis) { a.Findings[0].Cluster = "eu" }, 1, Skip, "in use: the analysis finds it neither idle nor underused", time.Time{}},
		{"another kind of finding", func(_ *Object, a *Analysis) { a.Findings[0].Kind, a.Findings[0].Summary = "oom-risk", "near its limit" }, 1, Skip, "in use: oom-risk: near its limit", time.Time{}},
		{"one replica of several busy", func(_ *Object, a *Analysis) { a.Findings[0].Evidence["busy_replicas"] = 2 }, 1, Skip, "in use: 2 of its replicas are busy", time.Time{}},
		{"stale node holds a pending reclaim", func(o *Object, a *Analysis) {
			o.Annotations[PendingSinceAnnotation] = ago(5 * time.Hour)
			a.Stale["n1"] = true
		}, 1, Skip, "the data of node n1 stops before the window's end (its exporter or the store is down)", time.Time{}},
		{"analysis failed", func(o *Object, a *Analysis) {
			o.Annotations[PendingSinceAnnotation] = ago(5 * time.Hour)
			a.Err = errors.New("prometheus: 503")
		}, 1, Skip, "analysis failed: prometheus: 503", time.Time{}},
		{"analysis partial", func(_ *Object, a *Analysis) { a.Partial = []string{"cluster eu not read"} }, 1, Skip, "analysis partial: cluster eu not read", time.Time{}},
		{"analysis old", func(_ *Object, a *Analysis) { a.End = now.Add(-20 * time.Minute) }, 1, Skip, "analysis ends 20m before now", time.Time{}},
		{"analysis window short", func(_ *Object, a *Analysis) { a.Window = 12 * time.Hour }, 1, Skip, "analysis window 12h is shorter than idle.for 1d", time.Time{}},
		{"owner from pod names", func(_ *Object, a *Analysis) { a.Findings[0].WorkloadSource = findings.SourcePodName }, 1, Skip, "its owner was found by pod-name, not read from the API server", time.Time{}},
		{"gaps in the window", func(_ *Object, a *Analysis) { a.Findings[0].Evidence["coverage"] = 0.9 }, 1, Skip, "held, with data, for 90% of the 1d window (want 95%): idle for all of it is not established", time.Time{}},
		{"a pod the analysis never saw", func(o *Object, a *Analysis) {
			o.Pods = []string{"nb-7c9-a", "nb-7c9-b"}
			a.Findings[0].Pods = []string{"nb-7c9-a"}
		}, 1, Skip, "pod nb-7c9-b runs without GPU data in the analysis (its node's exporter down, or the pod too new)", time.Time{}},
		{"every pod seen", func(o *Object, a *Analysis) {
			o.Pods = []string{"nb-7c9-a", "nb-7c9-b"}
			a.Findings[0].Pods = []string{"nb-7c9-b", "nb-7c9-a"}
		}, 1, Announce, "idle", now.Add(4 * time.Hour)},
		{"reclaimed and still at zero", func(o *Object, _ *Analysis) {
			o.Annotations[ReclaimedAtAnnotation], o.Replicas = ago(2*time.Hour), 0
		}, 1, Skip, "reclaimed at 2026-12-07T10:00:00Z", time.Time{}},
		{"reclaimed, scaled up by someone", func(o *Object, _ *Analysis) {
			o.Annotations[ReclaimedAtAnnotation], o.Replicas = ago(2*time.Hour), 2
		}, 1, MarkResumed, "running again since its reclaim at 2026-12-07T10:00:00Z", time.Time{}},
		{"resumed 2h ago: not idle for the full window since", func(o *Object, _ *Analysis) {
			o.Annotations[ReclaimedAtAnnotation], o.Annotations[ResumedAtAnnotation] = ago(3*time.Hour), ago(2*time.Hour)
		}, 1, Skip, "running again since 2026-12-07T10:00:00Z: not idle for the full 1d since", time.Time{}},
		{"resumed 25h ago and idle since: announced again", func(o *Object, _ *Analysis) {
			o.Annotations[ReclaimedAtAnnotation], o.Annotations[ResumedAtAnnotation] = ago(30*time.Hour), ago(25*time.Hour)
		}, 1, Announce, "idle", now.Add(4 * time.Hour)},
		{"a suspended Job holds nothing", func(o *Object, a *Analysis) {
			o.Kind, o.Suspended = KindJob, true
			a.Findings[0].WorkloadKind = KindJob
		}, 1, Skip, "holds no GPU (scaled to zero or suspended)", time.Time{}},
		{"a running Job", func(o *Object, a *Analysis) {
			o.Kind, o.Replicas = KindJob, 0
			a.Findings[0].WorkloadKind = KindJob
		}, 1, Announce, "idle", now.Add(4 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, a := notebook()
			if tc.change != nil {
				tc.change(&o, &a)
			}
			ds := Decide(p, a, []Object{o}, map[string]bool{"team-a": true}, now, tc.budget)
			if len(ds) != 1 {
				t.Fatalf("%d decisions, want 1: %+v", len(ds), ds)
			}
			d := ds[0]
			if d.Action != tc.want || d.Reason != tc.reason || !d.At.Equal(tc.at) {
				t.Errorf("got %s %q at %v\nwant %s %q at %v", d.Action, d.Reason, d.At, tc.want, tc.reason, tc.at)
			}
			if d.Action == Reclaim {
				want := Evidence{Findings: []vocab.Kind{"idle-allocation"}, Window: "1d", AnalysisEnd: now.Add(-time.Minute),
					AvgUtilization: 0.005, P95Utilization: 0.01, Coverage: 0.99, GPUs: 1, HourlyUSD: 2.5}
				if d.Evidence == nil || d.Evidence.HourlyUSD != want.HourlyUSD || d.Evidence.GPUs != 1 || d.Evidence.Window != "1d" ||
					d.Evidence.Coverage != 0.99 || !d.Evidence.AnalysisEnd.Equal(want.AnalysisEnd) {
					t.Errorf("evidence %+v, want %+v", d.Evidence, want)
				}
			}
		})
	}
}

// TestDecideRateLimit: with one action left in the hour, the reclaim
// pending longest happens and the other waits.
func TestDecideRateLimit(t *testing.T) {
	o1, a := notebook()
	o1.Annotations[PendingSinceAnnotation] = ago(5 * time.Hour)
	o2, _ := notebook()
	o2.Name = "nb2"
	o2.Annotations = map[string]string{PendingSinceAnnotation: ago(6 * time.Hour)}
	f := a.Findings[0]
	f.Workload = "nb2"
	a.Findings = append(a.Findings, f)
	ds := Decide(DefaultPolicy(), a, []Object{o1, o2}, nil, now, 1)
	if len(ds) != 2 || ds[0].Name != "nb2" || ds[0].Action != Reclaim || ds[1].Name != "nb" || ds[1].Action != Wait {
		t.Errorf("got %+v", ds)
	}
}

// TestDecideBarePod: an idle bare pod in an opted-in namespace is
// reported, never acted on; in another namespace, not even reported.
func TestDecideBarePod(t *testing.T) {
	_, a := notebook()
	a.Findings[0].WorkloadKind, a.Findings[0].Workload = "Pod", "scratch"
	g := a.Findings[0]
	g.Namespace = "team-b"
	a.Findings = append(a.Findings, g)
	ds := Decide(DefaultPolicy(), a, nil, map[string]bool{"team-a": true}, now, 10)
	if len(ds) != 1 || ds[0].Action != NotifyOnly || ds[0].Ref != (Ref{"team-a", "Pod", "scratch"}) || ds[0].Reason != "a Pod is not reclaimed: its owner is told" {
		t.Errorf("got %+v", ds)
	}
}

func TestParseRef(t *testing.T) {
	r, err := ParseRef("team-a/deployment/nb")
	if err != nil || r != (Ref{"team-a", KindDeployment, "nb"}) {
		t.Errorf("got %v, %v", r, err)
	}
	for _, bad := range []string{"team-a/nb", "team-a/Pod/x", "/Deployment/x"} {
		if _, err := ParseRef(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
