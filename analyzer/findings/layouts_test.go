package findings

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
	fleetmodel "github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
)

// layouts are every way the analyzer is given a fleet's data: gpulens's
// own series (with and without hostPID, through a ServiceMonitor, as a
// backfill without staleness markers) and dcgm-exporter's, in each of
// its pod mappings (one pod per device with a stable or a flapping pod
// label, per-pod copies, the 2025 per-process series with and without
// hostPID), in both host label eras, with its tenants in exported_*
// labels, with the GPU Operator's default counters file, on an H100
// whose MIG instances have no FB_* rows, and with time-sliced GPUs under a
// renamed resource that dcgm-exporter maps to no pod.
var layouts = func() []mode {
	out := []mode{
		nativeMode,
		{schema: native.Schema{}, allocationOnly: true},
		{schema: native.Schema{}, serviceMonitor: true},
		{schema: native.Schema{}, noStaleness: true},
		{schema: native.Schema{}, allocationOnly: true, noStaleness: true},
	}
	dcgmLayouts := []mode{
		{layout: fleet.DCGMNoVirtualGPUs},
		{layout: fleet.DCGMNoVirtualGPUs, flapping: true},
		{layout: fleet.DCGMVirtualGPUs},
		{layout: fleet.DCGMVirtualGPUs2025},
		{layout: fleet.DCGMVirtualGPUs2025, noHostPID: true},
	}
	for _, l := range dcgmLayouts {
		l.schema = dcgm.Schema{}
		stock := l
		stock.serviceMonitor, stock.defaultCSV = true, true
		legacy := l
		legacy.legacy = true
		legacyRelabelled := legacy
		legacyRelabelled.serviceMonitor = true
		bare := l
		bare.noMIGMemory, bare.noStaleness = true, true
		stockNoMIG := stock
		stockNoMIG.noMIGMemory = true
		renamed := stock
		renamed.renamedShared = true
		// dcgm-exporter 4.9 (DCGM 4.7's names and base units) as is, 4.10
		// as the GPU Operator installs it, and a fleet mid-upgrade.
		era49 := l
		era49.era = dcgm.Era49
		era410 := stock
		era410.era = dcgm.Era410
		upgrading := stock
		upgrading.era, upgrading.upgrading = dcgm.Era410, true
		out = append(out, l, stock, legacy, legacyRelabelled, bare, stockNoMIG, renamed, era49, era410, upgrading)
	}
	return out
}()

// TestHealthyInEveryLayout: a healthy fleet gets no warning or critical
// finding in any layout. Its workloads (testdata/layouts/healthy.yaml) are
// a busy trainer on a whole GPU, a well-sized MIG tenant and two inference
// tenants of a time-sliced GPU, none of which has anything to fix; where a
// layout cannot tell a tenant's own use, the analyzer may say so (info),
// never guess a verdict.
func TestHealthyInEveryLayout(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "layouts", "healthy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// With cluster access (GPU Feature Discovery's sharing labels, owners,
	// taints, quotas) and without it: a report over a store alone must not
	// raise a false alarm either, only say what it cannot judge.
	cluster := clusterOf(true, "")(s)
	for _, m := range layouts {
		res := func(t *testing.T) *fleetmodel.Result {
			return analyzeScenario(t, s, m, scenarioStart, scenarioEnd, scenarioStep)
		}
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			q := res(t)
			for _, inv := range []*inventory.Inventory{cluster, nil} {
				r := Detect(q, inv, criteria.DefaultConfig(), price.DefaultPrices())
				for _, f := range r.Findings {
					if f.Severity != Info {
						t.Errorf("cluster access %v: %s %s (pod %q, GPU %s): %s", inv != nil, f.Severity, f.Kind, f.Pod, f.GPUUUID, f.Summary)
					}
				}
				noExporterTenant(t, m, r)
			}
		})
	}
}

// TestBusyGPUWithoutPodIsNotFree: dcgm-exporter maps no pod to a GPU
// advertised as nvidia.com/gpu.shared (the device plugin's
// renameByDefault) unless --nvidia-resource-names names it, so the
// healthy fleet's time-sliced L4, busy with two inference tenants, reads
// as held by no pod all day. It must not be called free capacity to scale
// down: an info finding says it is in use by tenants the data does not
// name. The truly idle GPU of the unallocated-capacity scenario is still
// a warning in the same layout.
func TestBusyGPUWithoutPodIsNotFree(t *testing.T) {
	m := mode{schema: dcgm.Schema{}, layout: fleet.DCGMNoVirtualGPUs, flapping: true, serviceMonitor: true, defaultCSV: true, renamedShared: true}
	healthy, err := sim.Load(filepath.Join("testdata", "layouts", "healthy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r := runScenario(t, healthy, m, nil)
	l4 := devicesOf(healthy, "gpu-l4-1")[0].UUID
	var f *Finding
	for i := range r.Findings {
		if r.Findings[i].Kind == vocab.KindUnallocated && r.Findings[i].GPUUUID == l4 {
			f = &r.Findings[i]
		}
	}
	if f == nil || f.Severity != Info || !strings.Contains(f.Summary, "not free capacity") || f.Recommendation != nil {
		t.Fatalf("want the busy L4 said in use, at info, without advice:\n%s", summaries(r))
	}
	// The tenants' daily peaks are 0.5 and 0.45 of the GPU: their load
	// while unseen is far above idle.
	if f.Evidence["min_utilization_while_unallocated"] <= criteria.DefaultConfig().Idle.MaxAvgUtilization {
		t.Errorf("load while unallocated %v", f.Evidence["min_utilization_while_unallocated"])
	}

	idle, err := sim.Load(filepath.Join("testdata", "scenarios", string(vocab.KindUnallocated)+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	r = runScenario(t, idle, m, nil)
	if match(r, want{vocab.KindUnallocated, "", 1, Warning}, uuidsOf(idle)) == nil {
		t.Errorf("the idle GPU is no longer flagged:\n%s", summaries(r))
	}
}

// TestUnmappedTenantsMakeNoNodeFree: dcgm-exporter before
// --kubernetes-enable-dra (fleet.LegacyInstall) maps no pod to a GPU
// allocated through a ResourceClaim, so testdata/layouts/dra-node.yaml's
// three GPUs all read as held by no pod. The trainer's GPU is busy
// (TestBusyGPUWithoutPodIsNotFree) and the notebook's holds its memory,
// so neither is free, and with them the free GPU cannot be called free
// or the node scaled down: all are info, the last saying the exporter
// does not map every tenant here. With the DRA mapping on, the
// free GPU 2 is a warning beside the GPUs held now.
func TestUnmappedTenantsMakeNoNodeFree(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "layouts", "dra-node.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	uuids := uuidsOf(s)
	unmapped := mode{schema: dcgm.Schema{}, layout: fleet.DCGMNoVirtualGPUs, legacy: true}
	r := runScenario(t, s, unmapped, nil)
	for _, f := range r.Findings {
		if f.Severity != Info {
			t.Errorf("%s %s on %s: %s", f.Severity, f.Kind, f.GPUUUID, f.Summary)
		}
	}
	// The notebook's GPU holds its 10 GiB with no pod seen: in use itself
	// (issue 42, memory is a tenant the data cannot name, as load is).
	if f := match(r, want{vocab.KindUnallocated, "", 1, Info}, uuids); f == nil || !strings.Contains(f.Summary, "in use, not free capacity") ||
		f.Evidence["device_memory_used_p99_bytes"] < 9<<30 || f.Recommendation != nil {
		t.Errorf("GPU 1: want info that its memory is held by a tenant the data does not name:\n%s", summaries(r))
	}
	if f := match(r, want{vocab.KindUnallocated, "", 2, Info}, uuids); f == nil || !strings.Contains(f.Summary, "busy with no pod seen") ||
		f.Evidence["node_gpus_busy_without_pod"] != 2 || f.Recommendation != nil {
		t.Errorf("GPU 2: want info that the node's tenants are not all mapped:\n%s", summaries(r))
	}

	mapped := unmapped
	mapped.legacy = false // StockInstall: --kubernetes-enable-dra
	r = runScenario(t, s, mapped, nil)
	if f := match(r, want{vocab.KindUnallocated, "", 2, Warning}, uuids); f == nil || f.Evidence["node_gpus_held"] != 2 {
		t.Errorf("want the free GPU 2 flagged beside the 2 GPUs held now:\n%s", summaries(r))
	}
	if f := match(r, want{vocab.KindUnallocated, "", 1, ""}, uuids); f != nil {
		t.Errorf("the notebook's GPU is held, not unallocated: %s", f.Summary)
	}
}
