package reclaim

import (
	"maps"
	"testing"
	"time"
)

// TestAlert: a pending reclaim is an alert with the time it happens; a
// held one says why it is held; a bare pod's is notify-only; a skip is
// none.
func TestAlert(t *testing.T) {
	c := New(Options{Policy: DefaultPolicy(), Act: true})
	ref := Ref{"team-a", KindDeployment, "nb"}
	ev := &Evidence{GPUs: 1, AvgUtilization: 0.004, P95Utilization: 0.01, Coverage: 1, HourlyUSD: 2.5}
	for _, tc := range []struct {
		name   string
		d      Decision
		labels map[string]string
		ann    map[string]string
	}{
		{"announced", Decision{Object: Object{Ref: ref}, Action: Announce, Reason: "idle", Evidence: ev, PendingSince: now, At: now.Add(4 * time.Hour)},
			map[string]string{"alertname": "GPULensReclaimPending", "namespace": "team-a", "workload": "nb", "workload_kind": "Deployment", "severity": "warning"},
			map[string]string{"reclaim_at": "2026-12-07T16:00:00Z", "dry_run": "false", "reason": "idle",
				"summary":  "team-a/Deployment/nb will be scaled to 0 replicas at 2026-12-07T16:00:00Z unless its GPUs are used: idle over the last 1d",
				"evidence": "1 GPU(s), 0.4% average and 1.0% p95 utilisation, 100% of the window covered, $2.50 an hour"}},
		// Held by stale data, announced 5h ago: still due at its time.
		{"held", Decision{Object: Object{Ref: ref}, Action: Skip, Reason: "the data of node n1 stops", PendingSince: now.Add(-5 * time.Hour)},
			map[string]string{"alertname": "GPULensReclaimPending", "namespace": "team-a", "workload": "nb", "workload_kind": "Deployment", "severity": "warning"},
			map[string]string{"reclaim_at": "2026-12-07T11:00:00Z", "dry_run": "false", "reason": "the data of node n1 stops",
				"summary": "team-a/Deployment/nb: its pending reclaim is held: the data of node n1 stops"}},
		{"bare pod", Decision{Object: Object{Ref: Ref{"team-a", "Pod", "scratch"}}, Action: NotifyOnly, Reason: "a Pod is not reclaimed: its owner is told", Evidence: ev},
			map[string]string{"alertname": "GPULensReclaimNotifyOnly", "namespace": "team-a", "workload": "scratch", "workload_kind": "Pod", "severity": "warning"},
			map[string]string{"dry_run": "false", "reason": "a Pod is not reclaimed: its owner is told", "evidence": "1 GPU(s), 0.4% average and 1.0% p95 utilisation, 100% of the window covered, $2.50 an hour",
				"summary": "team-a/Pod/scratch holds idle GPUs (1 GPU(s), 0.4% average and 1.0% p95 utilisation, 100% of the window covered, $2.50 an hour); gpulens does not reclaim a Pod: its owner should release them"}},
		{"skip", Decision{Object: Object{Ref: ref}, Action: Skip, Reason: "in use"}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := c.alert(tc.d)
			if ok != (tc.labels != nil) {
				t.Fatalf("alert %v, want %v", ok, tc.labels != nil)
			}
			if !ok {
				return
			}
			if !maps.Equal(a.Labels, tc.labels) {
				t.Errorf("labels %v\nwant   %v", a.Labels, tc.labels)
			}
			if !maps.Equal(a.Annotations, tc.ann) {
				t.Errorf("annotations %v\nwant        %v", a.Annotations, tc.ann)
			}
		})
	}
}
