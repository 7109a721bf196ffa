package findings

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/exporter/sim"
)

// TestUnallocatedNamesWorkloadsHeldNow: beside a free GPU, the advice
// names the workloads that hold the node's GPUs at the end of the window,
// each once with the GPUs it holds, and never a pod gone by then (a
// rollout's old replicas, a finished Job); a node nothing holds at the end
// is to be scaled down, with nothing to move. Everything expected is read
// from testdata/scenarios/unallocated-rollout.yaml: which pods run at the
// end, on which GPUs, and which GPUs sat unallocated for most of the day.
// The data reaches the analyzer as gpulens's series and as dcgm-exporter's,
// with staleness markers and without them (a backfill, in which a deleted
// pod's series lingers for the lookback), and the owners come from the pod
// names or from the API's owner references.
func TestUnallocatedNamesWorkloadsHeldNow(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "scenarios", "unallocated-rollout.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	day := scenarioEnd.Sub(scenarioStart)
	// The controllers of the scenario's pods: a pod belongs to the one of
	// its namespace whose name, and a dash, begins its own.
	owners := []struct{ namespace, name, kind string }{
		{"team-shop", "web", "Deployment"},
		{"search", "embed", "StatefulSet"},
		{"batch", "nightly-etl", "Job"},
		{"batch", "backfill", "Job"},
	}
	ownerOf := func(p sim.Pod) (name, kind string) {
		for _, o := range owners {
			if o.namespace == p.Namespace && strings.HasPrefix(p.Name, o.name+"-") {
				return p.Namespace + "/" + o.name, o.kind
			}
		}
		t.Fatalf("no owner for pod %s/%s", p.Namespace, p.Name)
		return "", ""
	}
	runsAtEnd := func(p sim.Pod) bool { return p.End == 0 || time.Duration(p.End) >= day }

	// The planted truth, per node: the workloads holding GPUs at the end
	// with their GPUs, the pods and workloads gone by then, and the GPUs
	// unallocated for at least unallocated.min_ratio of the day.
	type truth struct {
		held        map[string]map[int]bool // "namespace/name (Kind" -> GPU indexes
		heldGPUs    map[int]bool
		gone        []string // pods and workloads that must never be named
		unallocated []string // UUIDs
	}
	minRatio := criteria.DefaultConfig().Unallocated.MinRatio
	truths := map[string]*truth{}
	for _, n := range s.Nodes {
		tr := &truth{held: map[string]map[int]bool{}, heldGPUs: map[int]bool{}}
		heldFor := map[int]time.Duration{}
		for _, p := range n.Pods {
			w, kind := ownerOf(p)
			end := day
			if !runsAtEnd(p) {
				end = time.Duration(p.End)
			}
			heldFor[p.GPU] += end - time.Duration(p.Start)
			key := w + " (" + kind
			if !runsAtEnd(p) {
				tr.gone = append(tr.gone, p.Name)
				continue
			}
			if tr.held[key] == nil {
				tr.held[key] = map[int]bool{}
			}
			tr.held[key][p.GPU], tr.heldGPUs[p.GPU] = true, true
		}
		for _, p := range n.Pods {
			if w, kind := ownerOf(p); tr.held[w+" ("+kind] == nil {
				tr.gone = append(tr.gone, w)
			}
		}
		for _, d := range devicesOf(s, n.Name) {
			if float64(day-heldFor[d.Index])/float64(day) >= minRatio {
				tr.unallocated = append(tr.unallocated, d.UUID)
			}
		}
		truths[n.Name] = tr
	}
	// The scenario plants what the test is about.
	if tr := truths["gpu-1"]; len(tr.held) != 2 || len(tr.gone) < 3 || len(tr.unallocated) != 2 {
		t.Fatalf("gpu-1's truth %+v: want two workloads held at the end, pods gone, two unallocated GPUs", tr)
	}
	if tr := truths["gpu-2"]; len(tr.held) != 0 || len(tr.unallocated) != 1 {
		t.Fatalf("gpu-2's truth %+v: want nothing held at the end and one unallocated GPU", tr)
	}

	// The API's owner references, for the pods that still exist.
	apiOwners := func(s *sim.Scenario) *inventory.Inventory {
		inv := &inventory.Inventory{Available: true, ReadAt: scenarioEnd, Pods: map[inventory.PodKey]inventory.Pod{},
			Namespaces: map[string]inventory.Namespace{}, Nodes: map[string]inventory.Node{}, Quotas: map[string][]inventory.Quota{}}
		for _, n := range s.Nodes {
			for _, p := range n.Pods {
				if !runsAtEnd(p) {
					continue
				}
				w, kind := ownerOf(p)
				k := inventory.PodKey{Namespace: p.Namespace, Name: p.Name}
				inv.Pods[k] = inventory.Pod{PodKey: k, Node: n.Name, Phase: "Running", WorkloadKind: kind, WorkloadName: strings.TrimPrefix(w, p.Namespace+"/"),
					GPURequests: map[vocab.Resource]int64{"nvidia.com/gpu": 1}}
			}
		}
		return inv
	}
	cases := []struct {
		m   mode
		inv func(*sim.Scenario) *inventory.Inventory
	}{
		{m: nativeMode},
		{m: dcgmOnePod},
		{m: dcgmPerProc},
		{m: mode{schema: native.Schema{}, noStaleness: true}},
		{m: mode{schema: dcgm.Schema{}, layout: dcgmOnePod.layout, noStaleness: true}},
		{m: nativeMode, inv: apiOwners},
	}
	for _, c := range cases {
		name := c.m.String()
		if c.inv != nil {
			name += "/api-owners"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var inv *inventory.Inventory
			if c.inv != nil {
				inv = c.inv(s)
			}
			r := runScenario(t, s, c.m, inv)
			got := map[string]Finding{}
			for _, f := range r.Findings {
				if f.Kind == vocab.KindUnallocated {
					got[f.GPUUUID] = f
				}
			}
			for node, tr := range truths {
				for _, uuid := range tr.unallocated {
					f, ok := got[uuid]
					if !ok {
						t.Errorf("%s: no unallocated-capacity finding for %s on %s:\n%s", c.m, uuid, node, summaries(r))
						continue
					}
					advice := f.Summary
					if f.Recommendation != nil {
						advice += "\n" + f.Recommendation.Summary
					}
					for _, gone := range tr.gone {
						if strings.Contains(advice, gone) {
							t.Errorf("%s: %s names %s, gone by the end of the window: %s", c.m, uuid, gone, advice)
						}
					}
					if len(tr.held) == 0 {
						if f.Recommendation == nil || f.Recommendation.Action != recommend.ActionScaleDown || strings.Contains(advice, "move") {
							t.Errorf("%s: %s on %s, which nothing holds at the end: %s, want a scale-down and nothing to move", c.m, uuid, node, advice)
						}
						continue
					}
					var names []string
					for key, gpus := range tr.held {
						n := fmt.Sprintf("%d GPUs", len(gpus))
						if len(gpus) == 1 {
							n = "1 GPU"
						}
						names = append(names, key+", "+n+")")
					}
					slices.Sort(names)
					for _, n := range names {
						if strings.Count(f.Summary, n) != 1 {
							t.Errorf("%s: %s names %q %d times, want once: %s", c.m, uuid, n, strings.Count(f.Summary, n), f.Summary)
						}
					}
					if want := "move " + strings.Join(names, ", ") + " so that a node empties"; !strings.Contains(f.Summary, want) {
						t.Errorf("%s: %s: %s\nwant it to say %q", c.m, uuid, f.Summary, want)
					}
					if f.Recommendation == nil || f.Recommendation.Action != recommend.ActionConsolidate || f.Evidence["node_gpus_held"] != float64(len(tr.heldGPUs)) {
						t.Errorf("%s: %s: %+v, evidence %v: want a consolidation with %d GPUs of %s held", c.m, uuid, f.Recommendation, f.Evidence, len(tr.heldGPUs), node)
					}
				}
			}
		})
	}
}

// TestUnallocatedHoldersFromOwners: the workloads are named as
// kube-state-metrics recorded their owners, a shared GPU's tenants by the
// GPU they sit on, an allocation gone hours before the end not at all,
// and past five workloads the rest are counted.
func TestUnallocatedHoldersFromOwners(t *testing.T) {
	free := gpu("GPU-free", h100, "none", 80*GiB)
	free.AllocatedHours, free.UnallocatedHours = 0, 168
	gpus := []fleet.GPU{free, gpu("GPU-ts", "NVIDIA L4", "time-slicing", 24*GiB), gpu("GPU-old", h100, "none", 80*GiB)}
	var allocs []fleet.Allocation
	// Two replicas of the Deployment chat on one time-sliced L4.
	for _, pod := range []string{"chat-6f7c8d9b4-bcdfg", "chat-6f7c8d9b4-hjklm"} {
		allocs = append(allocs, alloc(pod, "GPU-ts", "NVIDIA L4", "time-slicing", "", 0.25, 0.5, 0.6, 4*GiB))
	}
	// Six single pods on six whole H100s.
	for i := 1; i <= 6; i++ {
		uuid := fmt.Sprintf("GPU-w%d", i)
		gpus = append(gpus, gpu(uuid, h100, "none", 80*GiB))
		allocs = append(allocs, alloc(fmt.Sprintf("w%d", i), uuid, h100, "none", "", 1, 0.9, 0.95, 60*GiB))
	}
	// Held until three hours before the end.
	old := alloc("old-trainer", "GPU-old", h100, "none", "", 1, 0.9, 0.95, 60*GiB)
	old.SinceLastSeen = 3 * time.Hour
	allocs = append(allocs, old)
	res := result(allocs, gpus)
	res.PodOwners = map[fleet.PodRef]fleet.Owner{
		{Namespace: "team-a", Name: "chat-6f7c8d9b4-bcdfg"}: {Kind: "Deployment", Name: "chat"},
		{Namespace: "team-a", Name: "chat-6f7c8d9b4-hjklm"}: {Kind: "Deployment", Name: "chat"},
	}
	r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
	var f *Finding
	for i := range r.Findings {
		if r.Findings[i].Kind == vocab.KindUnallocated && r.Findings[i].GPUUUID == "GPU-free" {
			f = &r.Findings[i]
		}
	}
	if f == nil {
		t.Fatalf("no unallocated-capacity finding for GPU-free:\n%s", summaries(r))
	}
	// Seven workloads hold GPUs now, sorted by name: chat, w1..w6.
	want := "move team-a/chat (Deployment, 1 shared GPU), team-a/w1 (Pod, 1 GPU), team-a/w2 (Pod, 1 GPU), team-a/w3 (Pod, 1 GPU), team-a/w4 (Pod, 1 GPU) and 2 more so that a node empties"
	if !strings.Contains(f.Summary, want) || strings.Contains(f.Summary, "old-trainer") || strings.Contains(f.Summary, "chat-6f7c8d9b4") {
		t.Errorf("summary %q\nwant it to say %q, and neither the pods nor old-trainer", f.Summary, want)
	}
	if got := f.Evidence["node_gpus_held"]; got != 7 {
		t.Errorf("node_gpus_held %v, want 7 (the L4 and six H100s; GPU-old is free now)", got)
	}
}

// TestUnallocatedWithClusterPodsNotInData: the cluster lists a running pod
// requesting a whole GPU on a node that does not share its GPUs, and no
// series names it: the GPU the data shows free may be that pod's, so it
// is not called free (info, naming the pod). On a time-sliced node the
// co-tenants one-pod-per-device data does not show are expected and
// change nothing.
func TestUnallocatedWithClusterPodsNotInData(t *testing.T) {
	held := alloc("web-0", "GPU-1", h100, "none", "", 1, 0.9, 0.95, 10*GiB)
	free := gpu("GPU-2", h100, "", 80*GiB)
	free.AllocatedHours, free.UnallocatedHours = 0, 168
	for _, tt := range []struct {
		name     string
		strategy vocab.Sharing
		want     Severity
	}{
		{"whole GPUs", "none", Info},
		{"time-sliced", "time-slicing", Warning},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := result([]fleet.Allocation{held}, []fleet.GPU{gpu("GPU-1", h100, "none", 80*GiB), free})
			hidden := inventory.PodKey{Namespace: "team-b", Name: "batch-0"}
			inv := &inventory.Inventory{Available: true,
				Nodes: map[string]inventory.Node{"node-1": {Name: "node-1", Product: h100, SharingStrategy: tt.strategy, Replicas: 2,
					Capacity: map[vocab.Resource]int64{"nvidia.com/gpu": 2}}},
				Pods: map[inventory.PodKey]inventory.Pod{hidden: {PodKey: hidden, Node: "node-1", Phase: "Running",
					GPURequests: map[vocab.Resource]int64{"nvidia.com/gpu": 1}}}}
			r := Detect(res, inv, criteria.DefaultConfig(), price.DefaultPrices())
			f := find(r, vocab.KindUnallocated)
			if f == nil || f.Severity != tt.want {
				t.Fatalf("want unallocated-capacity at %s:\n%s", tt.want, summaries(r))
			}
			if tt.want == Info && (!strings.Contains(f.Summary, "team-b/batch-0") || f.Recommendation != nil) {
				t.Errorf("want the unseen pod named and no advice: %s", f.Summary)
			}
		})
	}
}
