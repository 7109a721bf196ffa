package serve

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/notify"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/vocab"
)

// TestRealAlertmanagers runs the notifier against two real Alertmanagers
// of one HA set: labels, no duplicates across analyses, resolution, and a
// restart of one of them mid-run.
func TestRealAlertmanagers(t *testing.T) {
	am1 := testenv.StartAlertmanager(t)
	am2 := testenv.StartAlertmanager(t)
	const resend = 500 * time.Millisecond
	n, err := notify.New(notify.Options{URLs: []string{am1.URL, am2.URL}, ResendInterval: resend, Backoff: 50 * time.Millisecond,
		Retries: 1, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	fs := []findings.Finding{
		{Kind: vocab.KindIdleAllocation, Severity: findings.Warning, Namespace: "team-a", Workload: "nb", Node: "n1",
			GPUUUID: "GPU-1", Summary: "nb holds a GPU it does not use", MonthlySavingsUSD: 2000, CostKnown: true},
		{Kind: vocab.KindTimesliceOOMRisk, Severity: findings.Critical, Namespace: "team-b", Workload: `odd "name"`,
			Node: "n2", GPUUUID: "GPU-2", Summary: "about to run out of memory"},
		{Kind: vocab.KindUnallocated, Severity: findings.Info, Node: "n3", GPUUUID: "GPU-3", Summary: "spare"},
	}
	wantLabels := []string{
		`alertname=GPULensGPUAllocatedIdle,gpu_uuid=GPU-1,namespace=team-a,node=n1,severity=warning,workload=nb`,
		`alertname=GPULensTimesliceOOMRisk,gpu_uuid=GPU-2,namespace=team-b,node=n2,severity=critical,workload=odd "name"`,
		`alertname=GPULensUnallocatedCapacity,gpu_uuid=GPU-3,node=n3,severity=info`,
	}
	expect := func(am *testenv.Alertmanager, want []string) []testenv.AMAlert {
		t.Helper()
		var got []testenv.AMAlert
		var keys []string
		deadline := time.Now().Add(20 * time.Second)
		for {
			got, err = am.Alerts()
			keys = labelKeys(got)
			if err == nil && slices.Equal(keys, want) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %q (err %v), want %q", am.URL, keys, err, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	n.Update(alertsOf(fs, "http://gpulens:9846/api/v1/report"))
	first := expect(am1, wantLabels)
	expect(am2, wantLabels)
	for _, a := range first {
		if a.Annotations["report"] != "http://gpulens:9846/api/v1/report" || a.Annotations["summary"] == "" {
			t.Errorf("annotations %v lack the summary or the report link", a.Annotations)
		}
		if a.Labels["alertname"] == "GPULensGPUAllocatedIdle" && a.Annotations["savings"] != "$2000/month" {
			t.Errorf("savings annotation %q", a.Annotations["savings"])
		}
	}

	// A second analysis with the same findings: the same three alerts,
	// still starting when they first fired.
	time.Sleep(2 * resend)
	n.Update(alertsOf(fs, "http://gpulens:9846/api/v1/report"))
	time.Sleep(2 * resend)
	for _, a := range expect(am1, wantLabels) {
		if i := slices.IndexFunc(first, func(f testenv.AMAlert) bool { return maps.Equal(f.Labels, a.Labels) }); !first[i].StartsAt.Equal(a.StartsAt) {
			t.Errorf("%v: startsAt moved from %v to %v", a.Labels, first[i].StartsAt, a.StartsAt)
		}
	}

	// The OOM risk goes away: both Alertmanagers resolve it.
	n.Update(alertsOf([]findings.Finding{fs[0], fs[2]}, "http://gpulens:9846/api/v1/report"))
	remaining := []string{wantLabels[0], wantLabels[2]}
	expect(am1, remaining)
	expect(am2, remaining)

	// am1 dies and comes back empty: the next resend fills it again.
	am1.Kill()
	time.Sleep(3 * resend) // resends fail meanwhile
	am1.Start()
	restarted := time.Now()
	expect(am1, remaining)
	d := time.Since(restarted)
	t.Logf("the restarted Alertmanager had every active alert back %s after it was ready (resend interval %s)", d.Round(time.Millisecond), resend)
	if d > 5*resend {
		t.Errorf("the restarted Alertmanager had its alerts back after %s, want about one resend interval (%s)", d, resend)
	}
	expect(am2, remaining)
}

func labelKeys(as []testenv.AMAlert) []string {
	var out []string
	for _, a := range as {
		if a.Status.State != "active" {
			continue
		}
		keys := slices.Sorted(maps.Keys(a.Labels))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%s", k, a.Labels[k])
		}
		out = append(out, strings.Join(parts, ","))
	}
	slices.Sort(out)
	return out
}
