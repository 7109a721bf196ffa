package findings

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
)

// xidEra is one way an application XID reaches the analyzer (a mode:
// gpulens's own counter, or dcgm-exporter's last-XID gauge as a release
// writes it, in a pod-mapping layout, scraped directly or through the GPU
// Operator's ServiceMonitor, into a store with or without staleness
// markers), with or without cluster access.
type xidEra struct {
	name string
	m    mode
	// noInventory runs without cluster access: owners from the pods'
	// names. Only where the data shows every co-tenant.
	noInventory bool
	// oneTenant: the layout names one tenant per device at every scrape,
	// the same one (dcgm-exporter's one-pod layout with a stable pod
	// label): a time-shared GPU's other tenants are not in the data, only
	// the cluster's word that the GPU is shared.
	oneTenant bool
}

// stockXID is today's GPU Operator: hostname, err_code/err_msg (a new XID
// is a new series), the pod label flapping between co-tenants, the
// default counters file (fleet.StockInstall).
func stockXID(layout fleet.DCGMLayout, monitor, noStaleness bool) mode {
	return mode{schema: dcgm.Schema{}, layout: layout, flapping: true, defaultCSV: true, serviceMonitor: monitor, noStaleness: noStaleness}
}

var xidEras = []xidEra{
	{name: "native", m: nativeMode},
	{name: "native/no-staleness-markers", m: mode{schema: native.Schema{}, noStaleness: true}},
	{name: "native/servicemonitor", m: mode{schema: native.Schema{}, serviceMonitor: true}},
	{name: "native/no-inventory", m: nativeMode, noInventory: true},
	// A release before #655 and 3.3.6-3.4.2: Hostname, a bare XID gauge
	// (no err_code), a stable pod label on a shared GPU (its last tenant).
	{name: "dcgm-legacy", m: mode{schema: dcgm.Schema{}, legacy: true}, oneTenant: true},
	{name: "dcgm-legacy/servicemonitor", m: mode{schema: dcgm.Schema{}, legacy: true, serviceMonitor: true}, oneTenant: true},
	{name: "dcgm-legacy/no-staleness-markers", m: mode{schema: dcgm.Schema{}, legacy: true, noStaleness: true}, oneTenant: true},
	{name: "dcgm-stock/servicemonitor", m: stockXID(fleet.DCGMNoVirtualGPUs, true, false)},
	{name: "dcgm-stock", m: stockXID(fleet.DCGMNoVirtualGPUs, false, false)},
	{name: "dcgm-stock/no-staleness-markers", m: stockXID(fleet.DCGMNoVirtualGPUs, true, true)},
	{name: "dcgm-stock/virtual-gpus", m: stockXID(fleet.DCGMVirtualGPUs, true, false)},
	{name: "dcgm-stock/virtual-gpus/no-inventory", m: stockXID(fleet.DCGMVirtualGPUs, false, false), noInventory: true},
	{name: "dcgm-stock/virtual-gpus-2025", m: stockXID(fleet.DCGMVirtualGPUs2025, true, false)},
}

// TestWorkloadXIDNamesItsHolder: every application XID a scenario plants
// is the finding of the workload whose pod held the GPU when it was
// raised, in every era: its namespace, owner, pod and the time. Where two
// tenants time-shared the GPU then, the finding names both and accuses
// neither. The expected holders are the scenario's: the pods on the
// fault's GPU whose life spans the fault.
func TestWorkloadXIDNamesItsHolder(t *testing.T) {
	for _, file := range []string{
		filepath.Join("testdata", "scenarios", "gpu-errors.yaml"),
		filepath.Join("testdata", "xid", "turns-and-shared.yaml"),
	} {
		s, err := sim.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, era := range xidEras {
			t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml")+"/"+era.name, func(t *testing.T) {
				t.Parallel()
				var inv *inventory.Inventory
				if !era.noInventory {
					inv = clusterOf(true, "")(s)
					// The cluster names the Deployment behind the ranker's
					// pod (the scenario's comment): the owner comes from
					// the API.
					for k, p := range inv.Pods {
						if strings.HasPrefix(k.Name, "ranker-") {
							p.WorkloadKind, p.WorkloadName = "Deployment", "ranker"
							inv.Pods[k] = p
						}
					}
				}
				r := Detect(analyzeScenario(t, s, era.m, scenarioStart, scenarioEnd, scenarioStep), inv, criteria.DefaultConfig(), price.DefaultPrices())
				checked := 0
				for _, node := range s.Nodes {
					for _, fault := range node.Faults {
						code := strconv.FormatUint(fault.XID, 10)
						if fault.Kind != sim.FaultXID || !signals.ApplicationXID(code) {
							continue
						}
						checked++
						checkXIDFinding(t, r, era, node, fault, code, devicesOf(s, node.Name)[fault.GPU].UUID)
					}
				}
				if checked == 0 {
					t.Fatal("the scenario plants no application XID")
				}
			})
		}
	}
}

// checkXIDFinding expects the workload-xid-errors finding of one planted
// fault.
func checkXIDFinding(t *testing.T, r *Result, era xidEra, node sim.Node, fault sim.Fault, code, uuid string) {
	t.Helper()
	at := scenarioStart.Add(time.Duration(fault.At))
	var holders []sim.Pod
	for _, p := range node.Pods {
		if p.GPU == fault.GPU && time.Duration(p.Start) <= time.Duration(fault.At) && (p.End == 0 || time.Duration(fault.At) < time.Duration(p.End)) {
			holders = append(holders, p)
		}
	}
	if len(holders) == 0 {
		t.Fatalf("XID %s at %s: no pod holds GPU %d in the scenario", code, at, fault.GPU)
	}
	// The first scrape at or after the fault shows it.
	seen := at.Add(-time.Nanosecond).Truncate(scenarioStep).Add(scenarioStep).UTC().Format("2006-01-02 15:04 UTC")
	var onGPU []Finding
	for _, f := range r.Findings {
		if f.Kind == vocab.KindWorkloadXID && f.GPUUUID == uuid {
			onGPU = append(onGPU, f)
		}
	}
	if len(onGPU) != 1 {
		t.Fatalf("XID %s on GPU %d: %d %s findings, want 1:\n%s", code, fault.GPU, len(onGPU), vocab.KindWorkloadXID, summaries(r))
	}
	f := onGPU[0]
	if !strings.Contains(f.Summary, "XID "+code) || !strings.Contains(f.Summary, "seen at "+seen) {
		t.Errorf("XID %s: summary %q lacks the code or %q", code, f.Summary, seen)
	}
	if len(holders) == 1 {
		h := holders[0]
		owner, kind := h.Name, "Pod"
		if strings.HasPrefix(h.Name, "ranker-") {
			owner, kind = "ranker", "Deployment" // the scenario's comment, and the test's cluster
		}
		if f.Namespace != h.Namespace || f.Pod != h.Name || !slices.Equal(f.Pods, []string{h.Name}) || f.Workload != owner || f.WorkloadKind != kind {
			t.Errorf("XID %s: finding names %s/%s %s %s (pods %v), want %s/%s %s %s:\n%s", code,
				f.Namespace, f.Workload, f.WorkloadKind, f.Pod, f.Pods, h.Namespace, owner, kind, h.Name, f.Summary)
		}
		if !strings.Contains(f.Summary, h.Namespace+"/"+owner) {
			t.Errorf("XID %s: summary %q does not name %s/%s", code, f.Summary, h.Namespace, owner)
		}
		return
	}
	// Several tenants held it: each is named, none accused.
	if f.Workload != "" || f.Pod != "" || f.WorkloadKind != "" {
		t.Errorf("XID %s: a time-shared GPU's error accuses %s/%s (pod %s):\n%s", code, f.Namespace, f.Workload, f.Pod, f.Summary)
	}
	if !strings.Contains(f.Summary, "cannot tell which") {
		t.Errorf("XID %s: summary %q does not say the data cannot tell which tenant raised it", code, f.Summary)
	}
	named := 0
	for _, h := range holders {
		if strings.Contains(f.Summary, h.Namespace+"/"+h.Name) {
			named++
		} else if !era.oneTenant {
			t.Errorf("XID %s: summary %q does not name the candidate %s/%s", code, f.Summary, h.Namespace, h.Name)
		}
	}
	// One tenant per device: the one the data shows is named, as a
	// candidate among tenants it does not show.
	if era.oneTenant && (named != 1 || !strings.Contains(f.Summary, "the cluster shares it")) {
		t.Errorf("XID %s: summary %q names %d of the tenants, want the one dcgm-exporter shows, and that the cluster shares the GPU", code, f.Summary, named)
	}
}
