package findings

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
	fleetmodel "github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/nvml"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/signals"
)

// want is a finding a scenario must yield: its kind, on the pod or on the
// GPU index (of the scenario's node) it is about, at a severity.
type want struct {
	kind     vocab.Kind
	pod      string // "" when the finding is not about a pod
	gpu      int    // index of the GPU on the scenario's first node; -1: any
	severity Severity
}

// scenario is one testdata/scenarios/<name>.yaml. Every finding kind the
// simulator can produce has one, run through the simulator, the embedded
// TSDB, the real query set and Detect, with gpulens's own series and with
// the series dcgm-exporter would have exposed for the same GPUs in each of
// its pod-mapping layouts (modes); and again through a ServiceMonitor's
// relabelling, which must change no finding.
//
// Two kinds have no scenario: mixed-gpu-models (a simulated node has one
// system, so one GPU model) and thermal-throttling (the simulator's
// physics only raise the idle and software-power-cap reasons, never a
// thermal one); TestDetectKinds covers both from hand-made results.
type scenario struct {
	name string
	// native is what gpulens's own series must yield; dcgm overrides it
	// for every dcgm-exporter layout, and byLayout for one layout.
	native, dcgm []want
	byLayout     map[fleet.DCGMLayout][]want
	// notDCGM are findings the native schema makes and dcgm-exporter's
	// cannot, and notLayout those one layout cannot; asserted absent
	// there, each with the reason in a comment.
	notDCGM   []want
	notLayout map[fleet.DCGMLayout][]want
	// inventory builds the cluster state for the inventory-only kinds.
	inventory func(*sim.Scenario) *inventory.Inventory
}

func (sc scenario) wants(m mode) []want {
	if m.schema.Name() != dcgm.SchemaName {
		return sc.native
	}
	// A flapping pod label names every co-tenant in turn, read as the
	// copies are, yet an unheld GPU keeps its series: the findings are the
	// common dcgm-exporter ones.
	if w, ok := sc.byLayout[m.layout]; ok && !m.flapping {
		return w
	}
	if sc.dcgm != nil {
		return sc.dcgm
	}
	return sc.native
}

func (sc scenario) absent(m mode) []want {
	if m.schema.Name() != dcgm.SchemaName {
		return nil
	}
	if m.flapping {
		return slices.Clone(sc.notDCGM)
	}
	return append(slices.Clone(sc.notDCGM), sc.notLayout[m.layout]...)
}

var scenarios = []scenario{
	{name: string(vocab.KindIdleAllocation), native: []want{{vocab.KindIdleAllocation, "alice-jupyter", 0, Warning}}},
	{name: string(vocab.KindUnderusedGPU), native: []want{{vocab.KindUnderusedGPU, "image-embed", 0, Warning}}},
	{
		// One pod per device (dcgm-exporter's default) shows the GPU held
		// whole by the last tenant listed; GPU Feature Discovery's labels
		// say it is time-sliced, and its own memory judges it.
		// TestTimeSlicedUnderOnePodLayout has the same without them.
		name:      string(vocab.KindTimesliceOOMRisk),
		native:    []want{{vocab.KindTimesliceOOMRisk, "", 0, Warning}},
		notLayout: map[fleet.DCGMLayout][]want{fleet.DCGMNoVirtualGPUs: {{vocab.KindUnderusedGPU, "", 0, ""}}},
		inventory: clusterOf(true, ""),
	},
	{name: string(vocab.KindMIGOversized), native: []want{{vocab.KindMIGOversized, "ocr-serving", 0, Warning}}},
	{name: string(vocab.KindMIGUndersized), native: []want{{vocab.KindMIGUndersized, "feature-train", 0, Warning}}},
	{
		name:   string(vocab.KindTrainingOnShared),
		native: []want{{vocab.KindTrainingOnShared, "recsys-train-small", 0, Warning}},
		// dcgm-exporter's copies, and its default layout's one pod label
		// (stable or flapping), give the tenants the device's load: the
		// light co-tenant reads exactly as the trainer does. The GPU's
		// training-like load is said of the GPU, at info, and no tenant is
		// accused.
		dcgm: []want{{vocab.KindTrainingOnShared, "", 0, Info}},
		byLayout: map[fleet.DCGMLayout][]want{
			// Per-process series are each tenant's own, as natively.
			fleet.DCGMVirtualGPUs2025: {{vocab.KindTrainingOnShared, "recsys-train-small", 0, Warning}},
		},
		// The inference co-tenant is never accused, in any layout.
		notDCGM: []want{{vocab.KindTrainingOnShared, "ab-test-svc", 0, ""}},
		notLayout: map[fleet.DCGMLayout][]want{
			fleet.DCGMNoVirtualGPUs: {{vocab.KindTrainingOnShared, "recsys-train-small", 0, ""}, {vocab.KindUnderusedGPU, "", 0, ""}},
			fleet.DCGMVirtualGPUs:   {{vocab.KindTrainingOnShared, "recsys-train-small", 0, ""}},
		},
		inventory: clusterOf(true, ""),
	},
	{
		name: string(vocab.KindUnallocated), native: []want{{vocab.KindUnallocated, "", 1, Warning}},
		// --kubernetes-virtual-gpus before 2025 rebuilds every series from
		// the pods: a GPU no pod holds has none, so it cannot be seen idle.
		byLayout:  map[fleet.DCGMLayout][]want{fleet.DCGMVirtualGPUs: nil},
		notLayout: map[fleet.DCGMLayout][]want{fleet.DCGMVirtualGPUs: {{vocab.KindUnallocated, "", 1, ""}}},
	},
	{
		name: string(vocab.KindGPUErrors),
		native: []want{
			{vocab.KindWorkloadXID, "train-a", 0, Info}, // XID 13: the application's, train-a's (it held GPU 0)
			{vocab.KindGPUErrors, "", 1, Critical},      // XID 79: lost
			{vocab.KindGPUErrors, "", 2, Critical},      // lost without an XID
		},
		// dcgm-exporter has no up signal and skips the blank readings of a
		// lost GPU: a GPU lost without XID 79 just stops reporting, which,
		// while the node's other GPU goes on, is an absence to the
		// window's end (fleet.Result.Absent), said as one. Its pod's
		// series end with it, as they would on --kubernetes-virtual-gpus
		// before 2025 for a GPU merely no longer held, so it is info
		// (podBound; on main 36bc8ff dcgm-exporter's GPU 2 had no
		// finding). XID 13 is never a GPU fault, under either schema.
		dcgm: []want{{vocab.KindWorkloadXID, "train-a", 0, Info}, {vocab.KindGPUErrors, "", 1, Critical}, {vocab.KindGPUErrors, "", 2, Info}},
	},
	{name: string(vocab.KindInsufficientData), native: []want{{vocab.KindInsufficientData, "short-job", 1, Info}}},
	{name: string(vocab.KindUntaintedNode), native: []want{{vocab.KindUntaintedNode, "", -1, Warning}}, inventory: clusterOf(false, "", "kube-system")},
	{name: string(vocab.KindNoGPUQuota), native: []want{{vocab.KindNoGPUQuota, "", -1, Info}}, inventory: clusterOf(true, "research")},
	{name: "healthy", inventory: clusterOf(true, "")},
}

// scenarioWindow is one simulated day at a five-minute scrape interval,
// starting on a Monday so inference follows its weekday traffic.
var (
	scenarioStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	scenarioEnd   = scenarioStart.Add(24 * time.Hour)
	scenarioStep  = 5 * time.Minute
)

// mode is one way the scenario's series reach the analyzer: an exporter,
// its pod-mapping layout, and whether a prometheus-operator ServiceMonitor
// with honorLabels: false relabelled them on the way into Prometheus.
type mode struct {
	schema         signals.Schema
	layout         fleet.DCGMLayout // dcgm-exporter only
	serviceMonitor bool
	// allocationOnly runs gpulens-exporter without hostPID: shared GPUs
	// get allocations only (native only).
	allocationOnly bool
	// noStaleness stores the series without staleness markers, as a
	// backfill, federation or a copy does.
	noStaleness bool
	// noMIGMemory is DCGM on H100 in MIG mode: no FB_* per GPU instance.
	noMIGMemory bool
	// flapping is a current install's one-pod layout, whose pod label
	// moves between a shared GPU's co-tenants from scrape to scrape (the
	// emulator's default); without it the label stays on the last pod
	// listed (LegacyInstall).
	flapping bool
	// noHostPID is the per-process layout deployed without hostPID: every
	// per-process pod row is 0.
	noHostPID bool
	// defaultCSV emits only the GPU Operator's default counters file.
	defaultCSV bool
	// legacy is a release before dcgm-exporter #655: the Hostname label,
	// a bare XID field without err_code (fleet.LegacyInstall).
	legacy bool
	// renamedShared is the device plugin's renameByDefault on a
	// dcgm-exporter that does not map nvidia.com/gpu.shared: time-sliced
	// GPUs carry no pod (fleet.DCGMInstall.RenamedSharedResource).
	renamedShared bool
	// era is dcgm-exporter's naming era (fleet.DCGMInstall.Era): 4.9's
	// DCGM 4.7 names and base units, 4.10's; zero is the names before.
	era dcgm.Era
	// upgrading is a fleet mid-upgrade to era: gpu-l4-1 stays on the old
	// names, every other node switches to era half-way through the window.
	upgrading bool
}

func (m mode) String() string {
	s := m.schema.Name()
	if m.schema.Name() == dcgm.SchemaName {
		s += "/" + m.layout.String()
	}
	if m.serviceMonitor {
		s += "/servicemonitor"
	}
	if m.allocationOnly {
		s += "/allocation-only"
	}
	if m.noStaleness {
		s += "/no-staleness-markers"
	}
	if m.flapping {
		s += "/flapping"
	}
	if m.noHostPID {
		s += "/no-hostpid"
	}
	if m.defaultCSV {
		s += "/default-csv"
	}
	if m.noMIGMemory {
		s += "/no-mig-memory"
	}
	if m.legacy {
		s += "/Hostname"
	}
	if m.renamedShared {
		s += "/gpu.shared-unmapped"
	}
	if m.era >= dcgm.Era49 {
		s += "/" + strings.ReplaceAll(m.era.String(), " ", "-")
	}
	if m.upgrading {
		s += "/upgrading"
	}
	return s
}

// golden is the mode's golden file suffix; relabelled modes have none, as
// they must match their unrelabelled mode exactly.
func (m mode) golden() string {
	switch {
	case m.schema.Name() == native.SchemaName:
		return "native"
	case m == dcgmStock:
		return "dcgm-stock"
	case m.layout == fleet.DCGMNoVirtualGPUs && m.flapping:
		return "dcgm-flapping"
	case m.layout == fleet.DCGMNoVirtualGPUs:
		return "dcgm"
	}
	return "dcgm-" + m.layout.String()
}

var (
	nativeMode   = mode{schema: native.Schema{}}
	dcgmOnePod   = mode{schema: dcgm.Schema{}, layout: fleet.DCGMNoVirtualGPUs}
	dcgmFlapping = mode{schema: dcgm.Schema{}, layout: fleet.DCGMNoVirtualGPUs, flapping: true}
	// dcgmStock is a week as a stock GPU Operator install writes it: the
	// one-pod layout with its flapping label, the default counters file,
	// through the operator's ServiceMonitor (honorLabels: false).
	dcgmStock   = mode{schema: dcgm.Schema{}, layout: fleet.DCGMNoVirtualGPUs, flapping: true, serviceMonitor: true, defaultCSV: true}
	dcgmCopies  = mode{schema: dcgm.Schema{}, layout: fleet.DCGMVirtualGPUs}
	dcgmPerProc = mode{schema: dcgm.Schema{}, layout: fleet.DCGMVirtualGPUs2025}
	modes       = []mode{nativeMode, dcgmOnePod, dcgmFlapping, dcgmStock, dcgmCopies, dcgmPerProc}
	renamedOf   = map[mode]mode{
		{schema: dcgm.Schema{}, layout: fleet.DCGMNoVirtualGPUs, era: dcgm.Era49}:   dcgmOnePod,
		{schema: dcgm.Schema{}, layout: fleet.DCGMVirtualGPUs2025, era: dcgm.Era49}: dcgmPerProc,
		{schema: dcgm.Schema{}, layout: fleet.DCGMVirtualGPUs, era: dcgm.Era410}:    dcgmCopies,
		withEra(dcgmStock, dcgm.Era410, false):                                      dcgmStock,
		withEra(dcgmStock, dcgm.Era410, true):                                       dcgmStock,
	}
	relabelledOf = map[mode]mode{
		{schema: native.Schema{}, serviceMonitor: true}:                                  nativeMode,
		{schema: dcgm.Schema{}, layout: fleet.DCGMNoVirtualGPUs, serviceMonitor: true}:   dcgmOnePod,
		{schema: dcgm.Schema{}, layout: fleet.DCGMVirtualGPUs2025, serviceMonitor: true}: dcgmPerProc,
	}
)

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			s, err := sim.Load(filepath.Join("testdata", "scenarios", sc.name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var inv *inventory.Inventory
			if sc.inventory != nil {
				inv = sc.inventory(s)
			}
			uuids := uuidsOf(s)
			reports := map[mode]*Result{}
			for _, m := range modes {
				report := runScenario(t, s, m, inv)
				reports[m] = report
				compareGolden(t, filepath.Join("testdata", "scenarios", fmt.Sprintf("%s.%s.golden.json", sc.name, m.golden())), report)
				for _, w := range sc.wants(m) {
					if f := match(report, w, uuids); f == nil {
						t.Errorf("%s: no %s finding for pod %q / GPU %d at %s:\n%s", m, w.kind, w.pod, w.gpu, w.severity, summaries(report))
					}
				}
				for _, w := range sc.absent(m) {
					if f := match(report, w, uuids); f != nil {
						t.Errorf("%s: a %s finding its data cannot support: %s", m, w.kind, f.Summary)
					}
				}
				noExporterTenant(t, m, report)
				// OOM risk rests on the device's own memory in every layout
				// that shows it, not on the tenants' attribution.
				for _, f := range report.Findings {
					if f.Kind == vocab.KindTimesliceOOMRisk && f.Evidence["device_memory_used_p99_bytes"] <= 0 {
						t.Errorf("%s: OOM risk without the device's memory as evidence: %v", m, f.Evidence)
					}
				}
				// The negative scenario: nothing but info, and nothing
				// skipped (its inventory makes every rule run).
				if sc.name == "healthy" {
					for _, f := range report.Findings {
						if f.Severity != Info {
							t.Errorf("%s: healthy fleet has a %s %s finding: %s", m, f.Severity, f.Kind, f.Summary)
						}
					}
					for _, sk := range report.Skipped {
						// The default counters file has no throttle
						// reasons: that check is skipped, and says why.
						if m.defaultCSV && strings.HasPrefix(sk, string(vocab.KindThermal)+":") {
							continue
						}
						t.Errorf("%s: skipped %v", m, sk)
					}
				}
			}
			// A week scraped through a ServiceMonitor gives the same
			// findings as the same week scraped directly; the same week
			// in dcgm-exporter 4.9's or 4.10's names and units, or on a
			// fleet mid-upgrade, as under the old names (issue 42).
			for _, of := range []map[mode]mode{relabelledOf, renamedOf} {
				for relabelled, base := range of {
					got, _ := json.Marshal(runScenario(t, s, relabelled, inv))
					want, _ := json.Marshal(reports[base])
					if string(got) != string(want) {
						t.Errorf("%s differs from %s:\n%s\nwant\n%s", relabelled, base, got, want)
					}
				}
			}
		})
	}
}

// noExporterTenant: no finding may name an exporter's own pod as a tenant.
func noExporterTenant(t *testing.T, m mode, r *Result) {
	t.Helper()
	for _, f := range r.Findings {
		for _, name := range []string{f.Pod, f.Workload, f.Namespace} {
			if strings.Contains(name, "exporter") || name == "gpu-operator" || name == "gpulens" {
				t.Errorf("%s: %s names the exporter as a tenant: %s", m, f.Kind, f.Summary)
			}
		}
	}
}

// runScenario simulates s into a fresh embedded TSDB, as m's exporter
// would have exposed it, and analyses it.
func runScenario(t *testing.T, s *sim.Scenario, m mode, inv *inventory.Inventory) *Result {
	t.Helper()
	return runScenarioIn(t, s, m, inv, scenarioStart, scenarioEnd, scenarioStep)
}

// runScenarioIn is runScenario over another window.
func runScenarioIn(t *testing.T, s *sim.Scenario, m mode, inv *inventory.Inventory, scenarioStart, scenarioEnd time.Time, scenarioStep time.Duration) *Result {
	t.Helper()
	return Detect(analyzeScenario(t, s, m, scenarioStart, scenarioEnd, scenarioStep), inv, criteria.DefaultConfig(), price.DefaultPrices())
}

// analyzeScenario simulates s into a fresh embedded TSDB, as m's exporter
// would have exposed it, and runs the query set over it.
func analyzeScenario(t *testing.T, s *sim.Scenario, m mode, scenarioStart, scenarioEnd time.Time, scenarioStep time.Duration) *fleetmodel.Result {
	t.Helper()
	return analyzeScenarioWith(t, s, m, scenarioStart, scenarioEnd, scenarioStep, nil)
}

// analyzeScenarioWith is analyzeScenario with kube-state-metrics'
// container series of every pod (fleet.Options.KubeStateMetrics), written
// through ksm, where it is set.
func analyzeScenarioWith(t *testing.T, s *sim.Scenario, m mode, scenarioStart, scenarioEnd time.Time, scenarioStep time.Duration,
	ksm func(fleet.Sink) fleet.Sink) *fleetmodel.Result {
	t.Helper()
	ctx := context.Background()
	db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n atomic.Int64
	newSink := func(node string) fleet.Sink {
		tsdb := fleet.NewTSDBSink(ctx, db, &n)
		if m.noStaleness {
			tsdb = tsdb.WithoutStaleness()
		}
		var sink fleet.Sink = tsdb
		dcgm := m.schema.Name() == dcgm.SchemaName
		if m.serviceMonitor {
			target := fleet.ExporterTarget("gpulens", "gpulens-exporter", "exporter", "9845", node)
			if dcgm {
				target = fleet.DCGMTarget(node)
			}
			sink = fleet.NewServiceMonitorSink(sink, target)
		}
		if dcgm {
			d := fleet.NewDCGMSink(sink)
			if m.legacy {
				d.Install = fleet.LegacyInstall()
			}
			d.Layout = m.layout
			d.Install.FlappingTenant = m.flapping // see mode.flapping
			d.Install.NoMIGMemory = m.noMIGMemory
			d.Install.RenamedSharedResource = m.renamedShared
			d.Install.NoHostPID = m.noHostPID
			d.Install.DefaultCSV = m.defaultCSV
			d.Install.Era = m.era
			if m.upgrading {
				d.Install.EraOf = upgradeAt(m.era, scenarioStart.Add(scenarioEnd.Sub(scenarioStart)/2))
			}
			sink = d
		}
		return sink
	}
	o := fleet.Options{Scenario: s, Start: scenarioStart, End: scenarioEnd, Step: scenarioStep, AllocationOnly: m.allocationOnly}
	if ksm != nil {
		o.KubeStateMetrics = func(string) fleet.Sink {
			return ksm(fleet.NewTSDBSink(ctx, db, &n).WithTarget("kube-state-metrics", "kube-state-metrics:8080"))
		}
	}
	if err := fleet.Run(ctx, o, newSink); err != nil {
		t.Fatal(err)
	}
	// The data must read as the schema it was written in.
	if got, err := source.Detect(ctx, db, scenarioStart, scenarioEnd, nil); err != nil || got.Name() != m.schema.Name() {
		t.Fatalf("schema detected as %v (%v), want %s", got, err, m.schema.Name())
	}
	res, err := query.Analyze(ctx, db, m.schema, fleetmodel.Window{Start: scenarioStart, End: scenarioEnd, Step: scenarioStep})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func withEra(m mode, e dcgm.Era, upgrading bool) mode {
	m.era, m.upgrading = e, upgrading
	return m
}

// upgradeAt is a fleet's upgrade to era: gpu-l4-1 keeps the old names,
// every other node moves to era at t.
func upgradeAt(era dcgm.Era, t time.Time) func(string, time.Time) dcgm.Era {
	return func(node string, ts time.Time) dcgm.Era {
		if node == "gpu-l4-1" || ts.Before(t) {
			return dcgm.EraLegacy
		}
		return era
	}
}

func compareGolden(t *testing.T, path string, report *Result) {
	t.Helper()
	got, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("report differs from %s (go test -update rewrites it):\n%s", path, got)
	}
}

// devicesOf describes a node's simulated GPUs (UUIDs derive from the seed).
func devicesOf(s *sim.Scenario, node string) []sim.DeviceInfo {
	b, err := sim.NewBackend(s, sim.BackendOptions{Node: node, Start: scenarioStart,
		NVML: nvml.Options{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		panic(err)
	}
	defer b.Close()
	return b.Node().Devices()
}

// uuidsOf maps the first node's GPU indexes to their UUIDs.
func uuidsOf(s *sim.Scenario) map[int]string {
	out := map[int]string{}
	for _, d := range devicesOf(s, s.Nodes[0].Name) {
		out[d.Index] = d.UUID
	}
	return out
}

func match(r *Result, w want, uuids map[int]string) *Finding {
	for i, f := range r.Findings {
		if f.Kind != w.kind || (w.pod != "" && f.Pod != w.pod) || (w.severity != "" && f.Severity != w.severity) {
			continue
		}
		if w.gpu >= 0 && f.GPUUUID != uuids[w.gpu] {
			continue
		}
		return &r.Findings[i]
	}
	return nil
}

func summaries(r *Result) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "  %s %s pod=%s gpu=%s: %s\n", f.Severity, f.Kind, f.Pod, f.GPUUUID, f.Summary)
	}
	return b.String()
}

// clusterOf builds the cluster's state for a scenario as the inventory
// would read it: one node per scenario node with GPU Feature Discovery's
// labels and capacity, the scenario's pods with the resources the device
// plugin would have them request, and a GPU ResourceQuota in every
// namespace except noQuota. With tainted false the nodes carry no
// NoSchedule taint; cpuPodNamespace, when set, puts a CPU-only Deployment
// pod on every node.
func clusterOf(tainted bool, noQuota string, cpuPodNamespace ...string) func(*sim.Scenario) *inventory.Inventory {
	return func(s *sim.Scenario) *inventory.Inventory {
		inv := &inventory.Inventory{Available: true, ReadAt: scenarioEnd, Pods: map[inventory.PodKey]inventory.Pod{},
			Namespaces: map[string]inventory.Namespace{}, Nodes: map[string]inventory.Node{}, Quotas: map[string][]inventory.Quota{}}
		for _, sn := range s.Nodes {
			devs := devicesOf(s, sn.Name)
			node := inventory.Node{Name: sn.Name, Product: devs[0].Model, Count: sn.GPUs,
				Capacity: map[vocab.Resource]int64{"nvidia.com/gpu": int64(sn.GPUs)}, SharingStrategy: vocab.SharingNone, Replicas: 1}
			// GPU Feature Discovery's labels: the node's time-slicing or
			// MPS strategy and replicas.
			for _, sh := range sn.Sharing {
				if sh.Mode == vocab.SharingTimeSlicing || sh.Mode == vocab.SharingMPS {
					node.SharingStrategy, node.Replicas = sh.Mode, sh.Replicas
				}
			}
			if tainted {
				node.Taints = []inventory.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}}
			}
			inv.Nodes[sn.Name] = node
			for _, p := range sn.Pods {
				// The resource the device plugin advertises the device
				// under: nvidia.com/gpu, gpu.shared or mig-<profile>.
				resource := devs[p.GPU].ResourceName
				if len(devs[p.GPU].Instances) > 0 {
					resource = devs[p.GPU].Instances[p.Instance].ResourceName
				}
				inv.Pods[inventory.PodKey{Namespace: p.Namespace, Name: p.Name}] = inventory.Pod{
					PodKey: inventory.PodKey{Namespace: p.Namespace, Name: p.Name}, Node: sn.Name, Phase: "Running",
					WorkloadKind: "Pod", WorkloadName: p.Name, GPURequests: map[vocab.Resource]int64{resource: 1}}
				inv.Namespaces[p.Namespace] = inventory.Namespace{Name: p.Namespace, Team: p.Namespace}
			}
			for _, ns := range cpuPodNamespace {
				name := "log-shipper-" + sn.Name
				inv.Pods[inventory.PodKey{Namespace: ns, Name: name}] = inventory.Pod{
					PodKey: inventory.PodKey{Namespace: ns, Name: name}, Node: sn.Name, Phase: "Running",
					WorkloadKind: "Deployment", WorkloadName: "log-shipper"}
			}
		}
		for ns := range inv.Namespaces {
			if ns != noQuota {
				inv.Quotas[ns] = []inventory.Quota{{Name: "gpu", Hard: map[string]int64{"requests.nvidia.com/gpu": 8}}}
			}
		}
		return inv
	}
}
