package query

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

// TestAllocationPaths analyses four hours of the DRA fleet of
// signals/testdata/*.dra.prom, as each exporter reports it, stored
// with staleness markers (a scrape) and without (a backfill): pod1 and
// pod2 share the claim single-gpu on a GH200, a Deployment's pod holds an
// A30's 1g.6gb instance through a claim, and on the mixed node trainer-0
// holds GPU 0 through the device plugin while the Deployment infer holds
// GPU 1 through a ResourceClaimTemplate's claim, rolled out at minute 120
// to a new pod, whose claim is new too (the template mints one per pod).
// pathWant is what an allocation's path should read.
type pathWant struct {
	path    vocab.AllocationPath
	claim   string
	sharing vocab.Sharing
	share   float64
}

func TestAllocationPaths(t *testing.T) {
	const oldPod, newPod = "infer-7d9f8c6b5-x2k9q", "infer-7d9f8c6b5-p4z8n"
	dra, dp := vocab.AllocationPathDRA, vocab.AllocationPathDevicePlugin
	wantAllocs := map[string]pathWant{
		"pod1":                {dra, "gpu-test3/single-gpu", "time-slicing", 0.5},
		"pod2":                {dra, "gpu-test3/single-gpu", "time-slicing", 0.5},
		"pod-c98945f5d-dnjs6": {dra, "gpu-test4/pod-c98945f5d-dnjs6-mig-devices-thfdj", "mig", 0.25}, // 1 of the A30's 4 compute slices
		"trainer-0":           {dp, "", "none", 1},
		oldPod:                {dra, "ml/" + oldPod + "-gpu-m4t7w", "none", 1},
		newPod:                {dra, "ml/" + newPod + "-gpu-m4t7w", "none", 1},
	}
	wantWorkloads := map[workload.Ref]pathWant{
		{Kind: "Pod", Namespace: "gpu-test3", Name: "pod1", Container: "ctr"}:          {dra, "[gpu-test3/single-gpu]", "time-slicing", 0.5},
		{Kind: "Pod", Namespace: "gpu-test3", Name: "pod2", Container: "ctr"}:          {dra, "[gpu-test3/single-gpu]", "time-slicing", 0.5},
		{Kind: "Deployment", Namespace: "gpu-test4", Name: "pod", Container: "ctr0"}:   {dra, "[gpu-test4/pod-c98945f5d-dnjs6-mig-devices-thfdj]", "mig", 0.25},
		{Kind: "StatefulSet", Namespace: "team-a", Name: "trainer", Container: "main"}: {dp, "[]", "none", 1},
		{Kind: "Deployment", Namespace: "ml", Name: "infer", Container: "server"}:      {dra, "[ml/" + newPod + "-gpu-m4t7w ml/" + oldPod + "-gpu-m4t7w]", "none", 1},
	}
	for _, sch := range []signals.Schema{native.Schema{}, dcgm.Schema{}} {
		file := map[string]string{native.SchemaName: "native.dra.prom", dcgm.SchemaName: "dcgm-exporter.dra.prom"}[sch.Name()]
		data, err := os.ReadFile("../../signals/testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		rolled := []byte(strings.ReplaceAll(string(data), oldPod, newPod))
		for _, stale := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s staleness=%v", sch.Name(), stale), func(t *testing.T) {
				f := newFleet(t)
				scrapeEach(t, f, data, 1, 120, stale)
				scrapeEach(t, f, rolled, 121, 240, stale)
				src := f.commit(t)
				res, err := Analyze(context.Background(), src, sch, window)
				if err != nil {
					t.Fatal(err)
				}
				checkPaths(t, res, wantAllocs, wantWorkloads)
				for _, pod := range []string{oldPod, newPod} {
					i := slices.IndexFunc(res.Allocations, func(x fleet.Allocation) bool { return x.Pod == pod })
					// Without staleness markers the old pod's series
					// linger for the lookback, under five minutes.
					if n := res.Allocations[i].Steps; n < 120 || n > 125 || (stale && n != 120) {
						t.Errorf("%s held %d steps, want 120", pod, n)
					}
				}
				if !stale {
					return
				}
				// One node and one namespace per shard: the same paths.
				sharded, err := AnalyzeSharded(context.Background(), src, sch, window, Sharding{MaxNodes: 1, MaxNamespaces: 1})
				if err != nil {
					t.Fatal(err)
				}
				checkPaths(t, sharded, wantAllocs, wantWorkloads)
			})
		}
	}
}

func checkPaths(t *testing.T, res *fleet.Result, allocs map[string]pathWant, workloads map[workload.Ref]pathWant) {
	t.Helper()
	if len(res.Allocations) != len(allocs) || len(res.Workloads) != len(workloads) {
		t.Errorf("%d allocations and %d workloads, want %d and %d:\n%+v\n%+v", len(res.Allocations), len(res.Workloads), len(allocs), len(workloads), res.Allocations, res.Workloads)
	}
	for _, x := range res.Allocations {
		claim := ""
		if x.Claim != (fleet.ClaimRef{}) {
			claim = x.Claim.String()
		}
		if got := (pathWant{x.AllocationPath, claim, x.Sharing, x.Share}); got != allocs[x.Pod] {
			t.Errorf("allocation %s: %+v, want %+v", x.Pod, got, allocs[x.Pod])
		}
	}
	for _, w := range res.Workloads {
		if got := (pathWant{w.AllocationPath, fmt.Sprint(w.Claims), w.Sharing, w.Share}); got != workloads[w.Ref] {
			t.Errorf("workload %s: %+v, want %+v", w.Ref, got, workloads[w.Ref])
		}
	}
}

// scrapeEach appends the exposition data at every minute of [from, to]
// and, where stale, a staleness marker for each of its series the minute
// after, as Prometheus's scrape loop does; without, the series just stop,
// as in a backfill or a copy.
func scrapeEach(t *testing.T, f *testFleet, data []byte, from, to int, stale bool) {
	t.Helper()
	path := t.TempDir() + "/scrape.prom"
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if stale {
		f.scrape(t, path, from, to)
		return
	}
	for i := from; i <= to; i++ {
		if _, err := source.AppendExposition(f.app, data, "", minute(i)); err != nil {
			t.Fatal(err)
		}
	}
}
