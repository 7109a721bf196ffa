package findings

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/vocab"
)

// TestTimeSlicedUnderOnePodLayout is issue 10's headline case: a
// time-sliced A100 with four leaking vLLM tenants, its memory at 92% by the
// end of the week, scraped from dcgm-exporter's default layout (one pod per
// device series). The data alone shows a whole GPU held by one arbitrary
// tenant, so the sharing mode must come from the cluster: with GPU Feature
// Discovery's labels or the device plugin's config the GPU gets an OOM
// risk from its own memory; without cluster access, no verdict on it, and
// the report says why.
func TestTimeSlicedUnderOnePodLayout(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "sharing", "vllm-leak-week.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const node = "gpu-a100-ts"
	week := 7 * 24 * time.Hour
	res := analyzeScenario(t, s, dcgmOnePod, scenarioStart, scenarioStart.Add(week), scenarioStep)
	uuid := uuidsOf(s)[0]

	// From the scenario: four tenants, each from 10752 MiB growing 48 MiB
	// an hour, on 80 GiB. The driver's reserve (1/128 of the memory) and
	// context overhead come on top of the tenants' own.
	const mib = 1 << 20
	tenants, initial, perHour := 4.0, 10752.0*mib, 48.0*mib
	wantLast := tenants * (initial + week.Hours()*perHour) // 73.5 GiB
	wantGrowth := tenants * perHour
	device := 80.0 * GiB
	if r := wantLast / device; math.Abs(r-0.92) > 0.005 {
		t.Fatalf("the scenario ends at %.3f of the device, not the issue's 92%%", r)
	}
	pods := []string{"vllm-chat-0", "vllm-chat-1", "vllm-chat-2", "vllm-chat-3"}

	if len(res.GPUs) != 1 || res.GPUs[0].Attribution != fleet.AttributionOneTenant {
		t.Fatalf("GPUs %+v, want one GPU read as one tenant's", res.GPUs)
	}

	withLabels := func(strategy vocab.Sharing, replicas int) *inventory.Inventory {
		inv := clusterOf(true, "")(s)
		n := inv.Nodes[node]
		n.SharingStrategy, n.Replicas = strategy, replicas
		inv.Nodes[node] = n
		return inv
	}
	// No GFD: only the device plugin's config says so.
	withConfig := withLabels("", 0)
	withConfig.Sharing = map[string]inventory.SharingConfig{
		"any": {TimeSlicing: map[vocab.Resource]int{"nvidia.com/gpu": 4}, Source: "gpu-operator/time-slicing-config"},
	}

	for _, tt := range []struct {
		name   string
		inv    *inventory.Inventory
		source string // "" when the cluster does not say the GPU is shared
	}{
		{"no cluster access", nil, ""},
		{"GFD labels", withLabels("time-slicing", 4), "nvidia.com/gpu.sharing-strategy=time-slicing"},
		{"device plugin config", withConfig, "gpu-operator/time-slicing-config"},
		// GFD says the node's GPUs are whole: the data is right as it is.
		{"GFD says not shared", withLabels("none", 1), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Detect(res, tt.inv, criteria.DefaultConfig(), price.DefaultPrices())
			oom := find(r, vocab.KindTimesliceOOMRisk)
			underused := find(r, vocab.KindUnderusedGPU)
			skipped := slices.ContainsFunc(r.Skipped, func(s string) bool {
				return strings.HasPrefix(s, string(vocab.KindTimesliceOOMRisk)) && strings.Contains(s, "cannot be told from a whole one")
			})
			if tt.inv == nil != skipped {
				t.Errorf("skipped %q: want the one-pod layout's blind spot said exactly when there is no cluster access", r.Skipped)
			}
			if tt.source == "" {
				// Read as a whole GPU held by one of the four, at the
				// device's 48%-ish use.
				if oom != nil {
					t.Errorf("OOM risk without the cluster saying the GPU is shared: %s", oom.Summary)
				}
				if underused == nil || !slices.Contains(pods, underused.Pod) {
					t.Errorf("want the visible tenant's whole GPU underused:\n%s", summaries(r))
				}
				return
			}
			if underused != nil {
				t.Errorf("a GPU the cluster says is time-sliced judged as a whole one: %s", underused.Summary)
			}
			if oom == nil || oom.GPUUUID != uuid || oom.Severity != Warning {
				t.Fatalf("want a warning %s on %s:\n%s", vocab.KindTimesliceOOMRisk, uuid, summaries(r))
			}
			ev := oom.Evidence
			if math.Abs(ev["device_memory_bytes"]-device) > mib {
				t.Errorf("device memory %.0f, want %.0f", ev["device_memory_bytes"], device)
			}
			if got := ev["device_memory_used_last_bytes"]; got < wantLast || got > wantLast+GiB {
				t.Errorf("device memory used at the end %.2f GiB, want %.2f GiB plus the driver's", got/GiB, wantLast/GiB)
			}
			if got := ev["device_memory_growth_bytes_per_hour"]; math.Abs(got-wantGrowth) > 0.02*wantGrowth {
				t.Errorf("device memory growth %.1f MiB/h, want %.0f", got/mib, wantGrowth/mib)
			}
			if got := ev["memory_ratio"]; got < 0.9 || got > 0.94 {
				t.Errorf("p99 memory ratio %.3f, want just under 92%%", got)
			}
			if ev["sharing_from_cluster"] != 1 || ev["cluster_replicas"] != 4 || ev["tenant_memory_unknown"] != 1 {
				t.Errorf("evidence %v does not say the sharing came from the cluster", ev)
			}
			// One tenant of four is seen; none is named as the one to fix.
			if len(oom.Pods) != 1 || !slices.Contains(pods, oom.Pods[0]) || oom.Workload != "" || oom.Recommendation != nil {
				t.Errorf("pods %v, workload %q, recommendation %+v: want the one visible tenant listed and none named", oom.Pods, oom.Workload, oom.Recommendation)
			}
			if oom.Confidence > 0.5 {
				t.Errorf("confidence %v: which tenant grows is not known", oom.Confidence)
			}
			for _, s := range []string{tt.source, "4 replicas", "not in the data", "+0.2 GiB/h"} {
				if !strings.Contains(oom.Summary, s) {
					t.Errorf("summary %q does not say %q", oom.Summary, s)
				}
			}
		})
	}
}

// TestClusterSharingCornerCases: replicas of one workload on time-sliced
// GPUs of two nodes are read as shared (each node's label is its own
// source), and a GPU on a node the cluster does not list by the data's
// name is said to be unknown rather than taken as whole in silence.
func TestClusterSharingCornerCases(t *testing.T) {
	g1, g2 := gpu("GPU-1", a100, "none", 80*GiB), gpu("GPU-2", a100, "none", 80*GiB)
	g2.Node = "node-2"
	for _, g := range []*fleet.GPU{&g1, &g2} {
		g.Attribution = fleet.AttributionOneTenant
		g.AvgUtilization = 0.9
	}
	a, b := alloc("web-0", "GPU-1", a100, "none", "", 1, 0.9, 0.95, 10*GiB), alloc("web-1", "GPU-2", a100, "none", "", 1, 0.9, 0.95, 10*GiB)
	b.Node = "node-2"
	res := result([]fleet.Allocation{a, b}, []fleet.GPU{g1, g2})
	// One workload on both GPUs.
	res.Workloads[0].GPUs = append(res.Workloads[0].GPUs, fleet.GPUKey{Node: "node-2", UUID: "GPU-2"})
	res.Workloads[0].Pods = []string{"web-0", "web-1"}
	res.Workloads = res.Workloads[:1]
	label := func(name string) inventory.Node {
		return inventory.Node{Name: name, Product: a100, SharingStrategy: "time-slicing", Replicas: 2, Capacity: map[vocab.Resource]int64{"nvidia.com/gpu": 2}}
	}
	inv := &inventory.Inventory{Available: true, Nodes: map[string]inventory.Node{"node-1": label("node-1"), "node-2": label("node-2")}}
	r := Detect(res, inv, criteria.DefaultConfig(), price.DefaultPrices())
	// Read as shared, each GPU's device load (0.95, copied onto its one
	// visible tenant) is the GPU's, not web's: said of each GPU, at info.
	for _, uuid := range []string{"GPU-1", "GPU-2"} {
		if !slices.ContainsFunc(r.Findings, func(f Finding) bool {
			return f.Kind == vocab.KindTrainingOnShared && f.GPUUUID == uuid && f.Severity == Info && f.Workload == ""
		}) {
			t.Errorf("want %s read as time-sliced, its load said of the GPU:\n%s", uuid, summaries(r))
		}
	}
	if f := find(r, vocab.KindTrainingOnShared); f != nil && f.Severity != Info {
		t.Errorf("a tenant accused on the device's figures: %s", f.Summary)
	}
	delete(inv.Nodes, "node-2")
	r = Detect(res, inv, criteria.DefaultConfig(), price.DefaultPrices())
	if !slices.ContainsFunc(r.Skipped, func(s string) bool {
		return strings.Contains(s, "1 GPUs show at most one pod per device and are on nodes the cluster does not list")
	}) {
		t.Errorf("skipped %q: want the GPU on an unlisted node said", r.Skipped)
	}
}
