package fleet

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

// DCGMSink turns a node's native series into what NVIDIA's dcgm-exporter,
// deployed by the GPU Operator with its Kubernetes pod mapping on, would
// have exposed for the same GPUs at the same step, and hands those to an
// inner Sink (typically a TSDBSink, which adds the staleness markers). It
// lets every analysis run against the dcgm-exporter schema on exactly the
// workload the native schema sees.
//
// Citations are to NVIDIA/dcgm-exporter at d5e5f51 (main, 2026-05-12,
// #655) unless another commit is named; 7b8b700 is main just before #594.
//
// What it reproduces, in dcgm-exporter's own names, units and labels:
//   - Labels gpu, UUID, device ("nvidia<index>"), modelName, Hostname,
//     pci_bus_id and DCGM_FI_DRIVER_VERSION on every series; GPU_I_PROFILE
//     and GPU_I_ID on MIG instances; pod, namespace and container when a
//     pod holds the device, and none of the three when none does.
//     dcgm-exporter internal/pkg/rendermetrics/render_metrics.go:47 and
//     internal/pkg/collector/gpu_collector.go:334-356 (d5e5f51); the driver
//     version is a "label" counter (gpu_collector.go:312-314,
//     etc/dcp-metrics-included.csv:70); GPU_I_ID is NVML's GPU instance ID
//     (gpu_collector.go:352); pod labels are set only for a mapped device
//     (internal/pkg/transformation/kubernetes.go:423-433, const.go:21-23).
//   - The default "flex" device mode: a GPU in MIG mode is reported per GPU
//     instance only (no parent row), and device-wide fields (power, energy,
//     XID, throttle reasons) repeat on every instance row. dcgm-exporter
//     pkg/cmd/app.go:204-210 (-d defaults to "f"),
//     internal/pkg/devicemonitoring/device_monitoring.go:41-42,97-125
//     (d5e5f51); every field is read per entity (gpu_collector.go:98), and
//     DCGM answers device fields of a GPU instance from its GPU.
//   - DCGM_FI_DEV_GPU_UTIL in percent, absent on MIG instances;
//     DCGM_FI_PROF_GR_ENGINE_ACTIVE 0..1 per GPU and per MIG instance;
//     DCGM_FI_DEV_FB_USED/FREE/RESERVED in whole MiB (no FB_RESERVED on MIG
//     instances, whose memory info has no reservation);
//     DCGM_FI_DEV_XID_ERRORS as the last XID code seen (0 before any);
//     DCGM_FI_DEV_CLOCK_THROTTLE_REASONS as NVML's bitmask;
//     DCGM_FI_DEV_POWER_USAGE in watts; DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION
//     in millijoules; DCGM_FI_DEV_GPU_TEMP in °C; DCGM_FI_DEV_SM_CLOCK and
//     DCGM_FI_DEV_MEM_CLOCK in MHz; DCGM_FI_DEV_ECC_SBE_VOL_TOTAL and
//     DCGM_FI_DEV_ECC_DBE_VOL_TOTAL (from NVML's aggregate counts: the
//     simulated driver is never reloaded, so volatile equals aggregate);
//     DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS, ..._UNCORRECTABLE_... and
//     DCGM_FI_DEV_ROW_REMAP_FAILURE. These device-wide fields repeat on MIG
//     instance rows like power does. Units and meanings are the counters
//     files' (etc/dcp-metrics-included.csv, d5e5f51); a field DCGM leaves
//     blank for an entity (GPU_UTIL on a GPU instance, dcgm-exporter #50,
//     #105) is dropped by gpu_collector.go:303-305.
//   - DCGM's profiling fields, from NVML GPM (Hopper and newer, as with the
//     native series), per whole GPU and per MIG instance:
//     DCGM_FI_PROF_SM_ACTIVE, DCGM_FI_PROF_SM_OCCUPANCY,
//     DCGM_FI_PROF_PIPE_TENSOR_ACTIVE and DCGM_FI_PROF_DRAM_ACTIVE. Of these
//     dcp-metrics-included.csv enables only TENSOR and DRAM (with
//     GR_ENGINE_ACTIVE); SM_ACTIVE and SM_OCCUPANCY are commented out there
//     (etc/dcp-metrics-included.csv:82-85, d5e5f51), so Install.DefaultCSV
//     drops them. On an instance SM_ACTIVE repeats GR_ENGINE_ACTIVE: NVML
//     has one SM activity per instance.
//   - The pod mapping of each release and flag (Layout): one pod per
//     device by default, per-pod copies under --kubernetes-virtual-gpus
//     (with vgpu), and with #594 per-pod per-process GPU_UTIL and FB_USED
//     beside the device's own series (with pod_uid). See DCGMLayout. GPUs
//     allocated through DRA claims get a copy per container with the
//     dra_* labels under --kubernetes-enable-dra (DCGMInstall.DRA), and no
//     pod without it (kubernetes.go:454-511, toDeviceToPodsDRA 573-653;
//     without the flag getMappings builds no DRA map, kubernetes.go:324-326,
//     and toDeviceToPod reads only device-plugin devices, 763-785).
//   - A lost or hung GPU: DCGM's readings come back blank and dcgm-exporter
//     skips blank values (gpu_collector.go:303-305, toString 373-395,
//     utils.go:35-61, d5e5f51), so only DCGM_FI_DEV_XID_ERRORS, which DCGM
//     keeps from the driver's event stream, remains. A GPU lost without an
//     XID 79 thus simply vanishes from dcgm-exporter's data.
//
// Relabelling by a ServiceMonitor is ServiceMonitorSink's, in front of
// the inner sink.
type DCGMSink struct {
	inner Sink
	// Layout is how pods are mapped onto the series (see DCGMLayout).
	Layout DCGMLayout
	// Install is the release's and the GPU Operator's choices that are not
	// the pod mapping (see DCGMInstall); NewDCGMSink sets Stock's.
	Install DCGMInstall

	steps int      // EndStep calls so far: a flapping pod label alternates by step
	era   dcgm.Era // the GPU's node's at this step (DCGMInstall.EraOf)

	step map[string]*dcgmGPU // by UUID, this step's readings
	// Kept across steps: the XID counters' last values (a new event is a
	// counter that grew), the last XID code per GPU, and each MIG GPU's
	// instances, so that a lost MIG GPU still reports its XID per instance.
	xidCounts map[string]map[string]float64
	lastXID   map[string]float64
	instances map[string]map[string]dcgmInstance
	lbuf      []*dto.LabelPair
}

// NewDCGMSink emulates dcgm-exporter in front of inner; Close closes inner.
func NewDCGMSink(inner Sink) *DCGMSink {
	return &DCGMSink{inner: inner, Install: StockInstall(), step: map[string]*dcgmGPU{}, xidCounts: map[string]map[string]float64{},
		lastXID: map[string]float64{}, instances: map[string]map[string]dcgmInstance{}}
}

// dcgmGPU is one physical GPU's native readings at one step; NaN is "not
// reported", which dcgm-exporter shows as no series.
type dcgmGPU struct {
	node, index, uuid, model, pciBusID, driver string
	mig, up                                    bool
	util, memUsed, memTotal, memReserved       float64
	power, energy                              float64
	temp, smClock, memClock                    float64
	smActive, smOccupancy, tensor, dram        float64
	eccSBE, eccDBE, remapCorr, remapUncorr     float64
	remapFailed                                float64
	throttle                                   uint64
	throttleKnown                              bool
	xid                                        map[string]float64
	instances                                  map[string]*dcgmInstance // by GPU instance ID
	holders                                    map[string][]podRef      // by GPU instance ID, "" for the GPU
	// own is each holder's measured use, from the native container series:
	// what NVML's per-process accounting gives dcgm-exporter's 2025 releases.
	own     map[podRef]*podUse
	sharing vocab.Sharing
	// claims are the holders that hold the device through a ResourceClaim
	// (DRA), from gpulens_container_gpu_claim_info.
	claims map[podRef]draClaim
}

// draClaim is a claim and the device of it, as dcgm-exporter's dra_*
// labels name them.
type draClaim struct{ namespace, name, driver, pool, device string }

type podUse struct{ alloc, util, mem float64 }

type dcgmInstance struct {
	id, profile, migUUID        string
	used, total, grEngineActive float64
	occupancy, tensor, dram     float64
}

type podRef struct{ namespace, pod, container, gi string }

func newDCGMGPU() *dcgmGPU {
	nan := math.NaN()
	return &dcgmGPU{util: nan, memUsed: nan, memTotal: nan, memReserved: nan, power: nan, energy: nan,
		temp: nan, smClock: nan, memClock: nan, smActive: nan, smOccupancy: nan, tensor: nan, dram: nan,
		eccSBE: nan, eccDBE: nan, remapCorr: nan, remapUncorr: nan, remapFailed: nan,
		xid: map[string]float64{}, instances: map[string]*dcgmInstance{}, holders: map[string][]podRef{}, own: map[podRef]*podUse{},
		claims: map[podRef]draClaim{}}
}

func (g *dcgmGPU) use(p podRef) *podUse {
	u := g.own[p]
	if u == nil {
		nan := math.NaN()
		u = &podUse{alloc: nan, util: nan, mem: nan}
		g.own[p] = u
	}
	return u
}

func (g *dcgmGPU) instance(id string) *dcgmInstance {
	in := g.instances[id]
	if in == nil {
		nan := math.NaN()
		in = &dcgmInstance{id: id, used: nan, total: nan, grEngineActive: nan, occupancy: nan, tensor: nan, dram: nan}
		g.instances[id] = in
	}
	return in
}

func label(lbls []*dto.LabelPair, name string) string {
	for _, l := range lbls {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// throttleBits maps the native reason names back to NVML's bits.
var throttleBits = func() map[string]uint64 {
	m := map[string]uint64{}
	for _, r := range gpu.ThrottleReasonNames {
		m[r.Name] = r.Bit
	}
	return m
}()

// Append implements Sink: it only records; the dcgm-exporter series are
// built at EndStep, once the step's device and pod series are all known.
func (s *DCGMSink) Append(_ time.Time, name string, lbls []*dto.LabelPair, v float64) error {
	uuid := label(lbls, "uuid")
	if uuid == "" {
		return nil // self-metrics
	}
	g := s.step[uuid]
	if g == nil {
		g = newDCGMGPU()
		g.uuid, g.node, g.index, g.model = uuid, label(lbls, "node"), label(lbls, "gpu"), label(lbls, "model")
		s.step[uuid] = g
	}
	switch name {
	case native.GPUInfo:
		g.pciBusID, g.driver, g.mig = label(lbls, "pci_bus_id"), label(lbls, "driver_version"), label(lbls, "mig_mode") == "true"
	case native.GPUUp:
		g.up = v == 1
	case native.GPUUtilizationRatio:
		g.util = v
	case native.GPUMemoryUsedBytes:
		g.memUsed = v
	case native.GPUMemoryTotalBytes:
		g.memTotal = v
	case native.GPUMemoryReservedBytes:
		g.memReserved = v
	case native.GPUPowerWatts:
		g.power = v
	case native.GPUEnergyJoulesTotal:
		g.energy = v
	case native.GPUTemperatureCelsius:
		g.temp = v
	case native.GPUClockHertz:
		switch label(lbls, "clock") {
		case "sm":
			g.smClock = v / 1e6
		case "memory":
			g.memClock = v / 1e6
		}
	case native.GPUSMActiveRatio:
		g.smActive = v
	case native.GPUSMOccupancyRatio:
		g.smOccupancy = v
	case native.GPUTensorActiveRatio:
		g.tensor = v
	case native.GPUDRAMActiveRatio:
		g.dram = v
	case native.GPUECCErrorsTotal:
		if label(lbls, "type") == "uncorrected" {
			g.eccDBE = v
		} else {
			g.eccSBE = v
		}
	case native.GPURemappedRows:
		if label(lbls, "type") == "uncorrectable" {
			g.remapUncorr = v
		} else {
			g.remapCorr = v
		}
	case native.GPURowRemapFailed:
		g.remapFailed = v
	case native.GPUThrottleActive:
		g.throttleKnown = true
		if v == 1 {
			g.throttle |= throttleBits[label(lbls, "reason")]
		}
	case native.GPUXIDErrorsTotal:
		g.xid[label(lbls, "xid")] = v
	case native.MIGInfo:
		in := g.instance(label(lbls, "gpu_instance"))
		in.profile, in.migUUID = label(lbls, "mig_profile"), label(lbls, "mig_uuid")
	case native.MIGMemoryUsedBytes:
		g.instance(label(lbls, "gpu_instance")).used = v
	case native.MIGMemoryTotalBytes:
		g.instance(label(lbls, "gpu_instance")).total = v
	case native.MIGSMActiveRatio:
		// DCGM's per-instance graphics-engine activity; NVML has only GPM
		// SM activity per instance, the closest reading.
		g.instance(label(lbls, "gpu_instance")).grEngineActive = v
	case native.MIGSMOccupancyRatio:
		g.instance(label(lbls, "gpu_instance")).occupancy = v
	case native.MIGTensorActiveRatio:
		g.instance(label(lbls, "gpu_instance")).tensor = v
	case native.MIGDRAMActiveRatio:
		g.instance(label(lbls, "gpu_instance")).dram = v
	case native.ContainerGPUAllocationRatio:
		// The allocation series are the kubelet's pod-resources view, the
		// same one dcgm-exporter's pod mapper reads.
		gi := label(lbls, "gpu_instance")
		p := podRef{label(lbls, "namespace"), label(lbls, "pod"), label(lbls, "container"), gi}
		if !slices.Contains(g.holders[gi], p) {
			g.holders[gi] = append(g.holders[gi], p)
		}
		g.use(p).alloc = v
		g.sharing = vocab.Sharing(label(lbls, "sharing"))
	case native.ContainerGPUClaimInfo:
		p := podRef{label(lbls, "namespace"), label(lbls, "pod"), label(lbls, "container"), label(lbls, "gpu_instance")}
		if _, ok := g.claims[p]; !ok { // one copy per container and device, whatever its claims
			g.claims[p] = draClaim{label(lbls, "claim_namespace"), label(lbls, "claim"), label(lbls, "driver"),
				label(lbls, "pool"), label(lbls, "device")}
		}
	case native.ContainerGPUUtilizationRatio:
		g.use(podRef{label(lbls, "namespace"), label(lbls, "pod"), label(lbls, "container"), label(lbls, "gpu_instance")}).util = v
	case native.ContainerGPUMemoryUsedBytes:
		g.use(podRef{label(lbls, "namespace"), label(lbls, "pod"), label(lbls, "container"), label(lbls, "gpu_instance")}).mem = v
	}
	return nil
}

// EndStep implements Sink: it emits the step's dcgm-exporter series to the
// inner sink and ends its step.
func (s *DCGMSink) EndStep(ts time.Time) error {
	for _, uuid := range slices.Sorted(maps.Keys(s.step)) {
		if err := s.emitGPU(ts, s.step[uuid]); err != nil {
			return err
		}
	}
	clear(s.step)
	s.steps++
	return s.inner.EndStep(ts)
}

// Close implements Sink.
func (s *DCGMSink) Close() error { return s.inner.Close() }

// updateXID turns the native per-code counters into DCGM's last-code
// gauge: a code whose counter grew since the last step (or appeared) is the
// newest event. Two codes in one step cannot be ordered; the higher wins,
// which is deterministic and in practice the more severe (79 over 13).
func (s *DCGMSink) updateXID(g *dcgmGPU) float64 {
	prev := s.xidCounts[g.uuid]
	if prev == nil {
		prev = map[string]float64{}
		s.xidCounts[g.uuid] = prev
	}
	newest := math.NaN()
	for code, n := range g.xid {
		if c, err := strconv.ParseFloat(code, 64); err == nil && n > prev[code] && !(c <= newest) {
			newest = c
		}
		prev[code] = n
	}
	if !math.IsNaN(newest) {
		s.lastXID[g.uuid] = newest
	}
	return s.lastXID[g.uuid]
}

func (s *DCGMSink) emitGPU(ts time.Time, g *dcgmGPU) error {
	s.era = s.Install.eraAt(g.node, ts)
	xid := s.updateXID(g)
	// Entities: the GPU, or its GPU instances in MIG mode (flex mode).
	type entity struct {
		in      *dcgmInstance
		holders []podRef
	}
	var entities []entity
	if g.mig || len(g.instances) > 0 {
		known := s.instances[g.uuid]
		if len(g.instances) > 0 {
			known = map[string]dcgmInstance{}
			for id, in := range g.instances {
				known[id] = *in
			}
			s.instances[g.uuid] = known
		}
		ids := slices.SortedFunc(maps.Keys(known), func(a, b string) int {
			x, _ := strconv.Atoi(a)
			y, _ := strconv.Atoi(b)
			return cmp.Or(cmp.Compare(x, y), cmp.Compare(a, b))
		})
		for _, id := range ids {
			in := known[id]
			if g.instances[id] == nil {
				// Remembered from an earlier step: identity only.
				nan := math.NaN()
				in.used, in.total, in.grEngineActive, in.occupancy, in.tensor, in.dram = nan, nan, nan, nan, nan, nan
			}
			entities = append(entities, entity{&in, g.holders[id]})
		}
	} else {
		entities = append(entities, entity{nil, g.holders[""]})
	}

	for _, e := range entities {
		for _, row := range s.rows(g, e.holders) {
			if err := s.emitRow(ts, g, xid, e.in, row); err != nil {
				return err
			}
		}
	}
	return nil
}

// row is one label set dcgm-exporter writes a GPU (or GPU instance) with:
// its pod, or none, and which fields it carries.
type row struct {
	p    podRef
	vgpu string
	// claim labels a DRA copy (Install.DRA): the device's series for one
	// container of a claim.
	claim *draClaim
	// perProcess: GPU_UTIL and FB_USED are the pod's own processes' (the
	// 2025 per-process series, which carry pod_uid); the other fields
	// are not written on it.
	perProcess bool
	// noPerProcessFields: the row is a copy beside per-process rows, so
	// GPU_UTIL and FB_USED are left to the device row and those.
	noPerProcessFields bool
}

// mapped splits an entity's holders, sorted as the kubelet lists them,
// into those dcgm-exporter's pod mapper sees through the device plugin and
// those it sees through claims. Without Install.DRA it reads no claims, so
// a claimed device's holders are not seen at all.
func (s *DCGMSink) mapped(g *dcgmGPU, holders []podRef) (plugin, claimed []podRef) {
	holders = slices.Clone(holders)
	slices.SortFunc(holders, func(a, b podRef) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.pod, b.pod), cmp.Compare(a.container, b.container))
	})
	renamed := s.Install.RenamedSharedResource && (g.sharing == vocab.SharingTimeSlicing || g.sharing == vocab.SharingMPS)
	for _, p := range holders {
		if _, ok := g.claims[p]; !ok {
			if !renamed {
				plugin = append(plugin, p)
			}
		} else if s.Install.DRA {
			claimed = append(claimed, p)
		}
	}
	return plugin, claimed
}

// rows lays out one entity's series for s.Layout, from dcgm-exporter's
// PodMapper.Process: holders sorted as the kubelet lists them.
func (s *DCGMSink) rows(g *dcgmGPU, holders []podRef) []row {
	holders, claimed := s.mapped(g, holders)
	if len(claimed) > 0 {
		// --kubernetes-enable-dra: a copy of the device's series per
		// container of its claims, and no row of the device itself
		// (kubernetes.go:454-511 at d5e5f51, PR #501), here whatever the
		// layout; upstream's --kubernetes-virtual-gpus path returns before
		// the DRA pass (kubernetes.go:338-410).
		out := make([]row, len(claimed))
		for i, p := range claimed {
			c := g.claims[p]
			out[i] = row{p: p, claim: &c}
		}
		return out
	}
	// The device plugin's replica number of a time-sliced or MPS device
	// ID ("<uuid>::<n>", getSharedGPU, kubernetes.go:550-558 and 669-671
	// at d5e5f51); the native series do not carry it, so the holders'
	// order stands in for it.
	vgpu := func(i int) string {
		if g.sharing == vocab.SharingTimeSlicing || g.sharing == vocab.SharingMPS {
			return strconv.Itoa(i)
		}
		return ""
	}
	switch {
	case len(holders) == 0 && s.Layout == DCGMVirtualGPUs:
		// The counter's list is rebuilt from the copies (kubernetes.go:
		// 301-303 at 7b8b700): the device vanishes.
		return nil
	case len(holders) == 0:
		return []row{{}}
	case s.Layout == DCGMNoVirtualGPUs && s.Install.FlappingTenant:
		// toDeviceToPod is a map from device ID to one pod: replicas of
		// one GPU share the ID, so the last pod the kubelet lists wins
		// (kubernetes.go:887-909, d5e5f51), and its list order is not
		// stable (dcgm-exporter #340): the pod label moves between the
		// co-tenants from scrape to scrape.
		return []row{{p: holders[s.steps%len(holders)]}}
	case s.Layout == DCGMNoVirtualGPUs:
		return []row{{p: holders[len(holders)-1]}}
	case s.Layout == DCGMVirtualGPUs:
		out := make([]row, len(holders))
		for i, p := range holders {
			out[i] = row{p: p, vgpu: vgpu(i)}
		}
		return out
	default: // DCGMVirtualGPUs2025
		out := []row{{}}
		for i, p := range holders {
			out = append(out, row{p: p, vgpu: vgpu(i), perProcess: true}, row{p: p, vgpu: vgpu(i), noPerProcessFields: true})
		}
		// With per-process series present, the device row carries only
		// GPU_UTIL and FB_USED (kubernetes.go:360-369, d5e5f51); the
		// copies carry the rest, and the unheld device keeps its row
		// (399-403).
		out[0].perProcess, out[0].noPerProcessFields = false, false
		return out
	}
}

func (s *DCGMSink) emitRow(ts time.Time, g *dcgmGPU, xid float64, in *dcgmInstance, r row) error {
	plugin, _ := s.mapped(g, g.holders[instanceID(in)])
	deviceBesideCopies := s.Layout == DCGMVirtualGPUs2025 && r.p.pod == "" && len(plugin) > 0
	emit := func(name string, v float64) error {
		if math.IsNaN(v) || !s.Install.emits(name) {
			return nil
		}
		if name == dcgm.ClockThrottleReasons && s.Install.ClocksEventReasons {
			name = dcgm.ClocksEventReasons
		}
		perProcessField := name == dcgm.GPUUtil || name == dcgm.FBUsed
		switch {
		case r.perProcess && !perProcessField, r.noPerProcessFields && perProcessField,
			deviceBesideCopies && !perProcessField:
			return nil
		}
		lbls := s.labels(g, in, r)
		if name == dcgm.XIDErrors && s.Install.XIDLabels {
			lbls = s.xidLabels(lbls, v)
		}
		if s.era >= dcgm.Era49 {
			// The release's own name and unit for the field, from the
			// legacy ones every value above is computed in.
			name, v = dcgm.Emitted(name, v, s.era)
		}
		return s.inner.Append(ts, name, lbls, v)
	}
	// The XID gauge is a field like any other to the pod mapper: it
	// carries the labels of the row's pod, whoever holds the device at
	// this scrape (dcgm-exporter d5e5f51,
	// internal/pkg/transformation/kubernetes.go:417-433 labels every
	// counter's metrics of a device with its one pod, 351-377 copies them
	// per pod under --kubernetes-virtual-gpus and keeps the device's own
	// only where no pod holds it, 401), so the tenant that held the GPU
	// when an XID arrived is on that XID's series.
	if err := emit(dcgm.XIDErrors, xid); err != nil {
		return err
	}
	if !g.up {
		return nil // blank readings: skipped by dcgm-exporter (gpu_collector.go:303-305, d5e5f51)
	}
	util, used := g.util, g.memUsed
	if in != nil {
		util, used = math.NaN(), in.used
	}
	if r.perProcess {
		// NVML's per-process accounting summed over the pod's processes:
		// utilization in percent of the GPU (the native figure is of the
		// allocation), memory in MiB. MIG instances have no per-process
		// utilization. dcgm-exporter (d5e5f51): process_metrics.go:59-75,
		// 88-100 (SM util, memory / MiB), MIG memory only 121-155; summed
		// per pod UID at kubernetes.go:254-269.
		u := g.own[r.p]
		if u == nil {
			return nil
		}
		util, used = u.util*zeroIfNaN(u.alloc), u.mem
		if s.Install.NoHostPID {
			util, used = 0, 0
		}
		if in != nil {
			util = math.NaN()
		}
	}
	var err error
	if in == nil {
		err = emitAll(emit,
			dcgm.GPUUtil, math.Round(util*100),
			dcgm.GREngineActive, g.util,
			dcgm.FBUsed, mibFloor(used),
			dcgm.FBFree, mibFloor(g.memTotal-g.memUsed-zeroIfNaN(g.memReserved)),
			dcgm.FBReserved, mibFloor(g.memReserved),
			dcgm.SMActive, g.smActive,
			dcgm.SMOccupancy, g.smOccupancy,
			dcgm.TensorActive, g.tensor,
			dcgm.DRAMActive, g.dram)
	} else {
		err = emitAll(emit,
			dcgm.GREngineActive, in.grEngineActive,
			dcgm.SMActive, in.grEngineActive,
			dcgm.SMOccupancy, in.occupancy,
			dcgm.TensorActive, in.tensor,
			dcgm.DRAMActive, in.dram,
			dcgm.FBUsed, s.Install.migMemory(mibFloor(used)),
			dcgm.FBFree, s.Install.migMemory(mibFloor(in.total-in.used)))
	}
	if err != nil {
		return err
	}
	throttle := math.NaN()
	if g.throttleKnown {
		throttle = float64(g.throttle)
	}
	return emitAll(emit,
		dcgm.ClockThrottleReasons, throttle,
		dcgm.PowerUsage, g.power,
		dcgm.TotalEnergy, math.Round(g.energy*1000),
		dcgm.GPUTemp, g.temp,
		dcgm.SMClock, math.Round(g.smClock),
		dcgm.MemClock, math.Round(g.memClock),
		dcgm.ECCSBEVolTotal, g.eccSBE,
		dcgm.ECCDBEVolTotal, g.eccDBE,
		dcgm.CorrectableRemappedRows, g.remapCorr,
		dcgm.UncorrectableRemappedRows, g.remapUncorr,
		dcgm.RowRemapFailure, g.remapFailed)
}

func instanceID(in *dcgmInstance) string {
	if in == nil {
		return ""
	}
	return in.id
}

// emitAll calls emit for each name, value pair.
func emitAll(emit func(string, float64) error, pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := emit(pairs[i].(string), pairs[i+1].(float64)); err != nil {
			return err
		}
	}
	return nil
}

// mibFloor is bytes in whole MiB, as DCGM reports framebuffer sizes; NaN
// stays NaN and a negative remainder (rounding at the edges) is 0.
func mibFloor(b float64) float64 {
	if math.IsNaN(b) {
		return b
	}
	return math.Max(0, math.Floor(b/(1<<20)))
}

func zeroIfNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// labels builds dcgm-exporter's label set into a buffer the inner sink may
// read until the next call (the Sink contract: labels are reused).
func (s *DCGMSink) labels(g *dcgmGPU, in *dcgmInstance, r row) []*dto.LabelPair {
	s.lbuf = s.lbuf[:0]
	add := func(name, value string) {
		s.lbuf = append(s.lbuf, &dto.LabelPair{Name: &name, Value: &value})
	}
	add(dcgm.LabelGPU, g.index)
	add(dcgm.LabelUUID, g.uuid)
	add(dcgm.LabelDevice, "nvidia"+g.index)
	add(dcgm.LabelModel, g.model)
	switch {
	case s.Install.HostLabel != "" && s.Install.HostIsPod:
		add(s.Install.HostLabel, DCGMExporterPod(g.node))
	case s.Install.HostLabel != "":
		add(s.Install.HostLabel, g.node)
	}
	add(dcgm.LabelPCIBusID, g.pciBusID)
	if s.era >= dcgm.Era49 {
		add(dcgm.DriverVersionLabels[0], g.driver)
	} else {
		add(dcgm.DriverVersion, g.driver)
	}
	if in != nil {
		add(dcgm.LabelMIGProfile, in.profile)
		add(dcgm.LabelGPUInstance, in.id)
	}
	if r.p.pod != "" {
		add("pod", r.p.pod)
		add("namespace", r.p.namespace)
		add("container", r.p.container)
		if r.vgpu != "" {
			add(dcgm.LabelVGPU, r.vgpu)
		}
		if r.perProcess {
			add(dcgm.LabelPodUID, podUID(r.p))
		}
	}
	if c := r.claim; c != nil {
		add(dcgm.LabelDRAClaimName, c.name)
		add(dcgm.LabelDRAClaimNamespace, c.namespace)
		add(dcgm.LabelDRADriverName, c.driver)
		add(dcgm.LabelDRAPoolName, c.pool)
		add(dcgm.LabelDRADeviceName, c.device)
		if in != nil {
			// Current releases (PR #664, after d5e5f51) put a MIG claim on
			// its GPU instance's series; at d5e5f51 it is keyed by the
			// parent UUID (transformation/dra.go:97-100), which no GPU
			// instance's ID matches (collector/types.go:81-83).
			add(dcgm.LabelDRAMIGProfile, in.profile)
			add(dcgm.LabelDRAMIGDeviceUUID, in.migUUID)
		}
	}
	return s.lbuf
}

// xidLabels adds err_code and err_msg, as gpu_collector.go does from
// 3.3.6-3.4.2 on (d5e5f51, internal/pkg/collector/gpu_collector.go:324-331:
// the code of the value, and its text or "Unknown Error"): each code is
// then a series of its own, and a new XID ends the old code's series.
func (s *DCGMSink) xidLabels(lbls []*dto.LabelPair, code float64) []*dto.LabelPair {
	c := strconv.Itoa(int(code))
	msg, ok := xidMessages[int(code)]
	if !ok {
		msg = "Unknown Error"
	}
	for _, l := range [][2]string{{dcgm.LabelErrCode, c}, {dcgm.LabelErrMsg, msg}} {
		s.lbuf = append(s.lbuf, &dto.LabelPair{Name: &l[0], Value: &l[1]})
	}
	return s.lbuf
}

// xidMessages are the texts of internal/pkg/collector/xid_errors.go for
// the codes the simulator raises.
var xidMessages = map[int]string{
	0:  "No Error",
	13: "Graphics Engine Exception",
	31: "GPU memory page fault",
	43: "GPU stopped processing",
	45: "Preemptive cleanup, due to previous errors -- Most likely to see when running multiple cuda",
	48: "DBE (Double Bit Error) ECC Error",
	63: "ECC page retirement or row remapping recording event",
	64: "ECC page retirement or row remapper recording failure",
	74: "NVLINK Error",
	79: "GPU has fallen off the bus",
	94: "Contained ECC error",
	95: "Uncontained ECC error",
}

// DCGMInstall is what a dcgm-exporter release and its deployment decide
// beyond the pod mapping. StockInstall is a current GPU Operator install;
// LegacyInstall is a release before #655 and 3.3.6-3.4.2 with every field
// enabled, as the emulator wrote before.
type DCGMInstall struct {
	// HostLabel is the host label's name: hostname (#655, d5e5f51,
	// rendermetrics/render_metrics.go:47; in no release tag yet at that
	// commit), Hostname (before #655, render_metrics.go:47 at 7b8b700), or
	// empty (--no-hostname, honoured only before 4.0.0: the flag is parsed
	// at pkg/cmd/app.go:1101 but read nowhere since #437, 5f9250c).
	HostLabel string
	// XIDLabels adds err_code and err_msg to the XID field (#309, first in
	// 3.3.6-3.4.2): collector/gpu_collector.go:324-332 with the texts of
	// collector/xid_errors.go:20 (d5e5f51).
	XIDLabels bool
	// DefaultCSV emits only the fields of the GPU Operator's default
	// counters file, etc/dcp-metrics-included.csv (signals/dcgm); otherwise
	// every field is emitted. The binary's own default is
	// etc/default-counters.csv (pkg/cmd/app.go:123-129, d5e5f51).
	DefaultCSV bool
	// FlappingTenant makes the default layout's one pod label move between
	// a shared GPU's co-tenants from step to step (dcgm-exporter #340):
	// toDeviceToPod keeps the last pod listed per device ID
	// (transformation/kubernetes.go:887-909, d5e5f51) in the order the
	// kubelet's List returns, which it does not keep stable.
	FlappingTenant bool
	// ClocksEventReasons names the throttle field as DCGM 3.3 and later do
	// (dcgm-exporter's own code uses that name from 4.0.0, #437:
	// collector/clock_events_collector.go:102, d5e5f51; the series is
	// named by the counters file's line).
	ClocksEventReasons bool
	// NoHostPID is the per-process layout without hostPID (the default of
	// dcgm-exporter's chart, deployment/values.yaml:54, and the GPU
	// Operator's): the pid mapper reads /proc/<pid>/cgroup for NVML's host
	// PIDs (transformation/pidmapper.go:45-48), fails and skips each
	// (pidmapper.go:91-97), and every pod on the device then gets the idle
	// value "0" (kubernetes.go:219, buildIdlePodValues 271-279; d5e5f51).
	NoHostPID bool
	// HostIsPod writes the exporter pod's name (DCGMExporterPod) in the
	// host label, as dcgm-exporter does where NODE_NAME is not set: it
	// falls back to the host name, which in a pod is the pod's
	// (internal/pkg/hostname/hostname.go:30-32,52-61, d5e5f51).
	HostIsPod bool
	// DRA is --kubernetes-enable-dra (KUBERNETES_ENABLE_DRA, PR #501, off
	// by default: pkg/cmd/app.go:329-334): the pod mapper also reads the
	// kubelet's dynamic resources and writes a copy of a claimed device's
	// series per container, with dra_* labels (kubernetes.go:454-511,
	// one copy per container and device: 606-617; d5e5f51). Without it a
	// GPU allocated through a claim has no pod at all.
	DRA bool
	// NoMIGMemory leaves FB_USED and FB_FREE out of MIG GPU instances, as
	// DCGM does on H100 in MIG mode (dcgm-exporter #380, #434, #512); the
	// profiling fields stay. dcgm-exporter has no code of its own for
	// this: DCGM returns blanks, which gpu_collector.go:303-305 drops.
	NoMIGMemory bool
	// RenamedSharedResource is the device plugin's sharing config with
	// renameByDefault: true, which advertises time-sliced and MPS GPUs as
	// nvidia.com/gpu.shared, on a dcgm-exporter without
	// --nvidia-resource-names for it: the pod mapper reads only
	// nvidia.com/gpu, the names that flag adds and nvidia.com/mig-*
	// (internal/pkg/transformation/kubernetes.go:74-85 and 772-785 at
	// d5e5f51; dcgm-exporter #151), so a shared GPU's series carry no pod
	// however busy its tenants are.
	RenamedSharedResource bool
	// Era is the release's naming era (signals/dcgm eras.go): from 4.9 on
	// every field the release renamed under its DCGM 4.7 name and in its
	// base unit, and the driver label DCGM_FI_SYSTEM_DRIVER_VERSION. An
	// era before 4.9 writes the names above (the zero value).
	Era dcgm.Era
	// EraOf, where set, is each node's era at each step instead: a fleet
	// upgraded node by node, a node upgraded inside the window.
	EraOf func(node string, ts time.Time) dcgm.Era
}

// eraAt is node's era at ts.
func (i DCGMInstall) eraAt(node string, ts time.Time) dcgm.Era {
	if i.EraOf != nil {
		return i.EraOf(node, ts)
	}
	return i.Era
}

func (i DCGMInstall) migMemory(v float64) float64 {
	if i.NoMIGMemory {
		return math.NaN()
	}
	return v
}

// StockInstall is the GPU Operator's dcgm-exporter as installed today: the
// current host label, XID labels, a flapping pod label on shared GPUs,
// DCGM 3.3's field names, and only the fields of the default counters
// file (no throttle reasons, no ECC totals, no SM activity). A reader that
// needs the other fields sets DefaultCSV to false, as a user would with a
// counters file of their own. Its DRA mapping is on, as a cluster that
// runs NVIDIA's DRA driver would set it; on nodes without claims it
// changes nothing.
func StockInstall() DCGMInstall {
	return DCGMInstall{HostLabel: dcgm.LabelHostname, XIDLabels: true, FlappingTenant: true, ClocksEventReasons: true, DefaultCSV: true,
		DRA: true}
}

// LegacyInstall is an older release: Hostname, a bare XID field, a stable
// pod label, CLOCK_THROTTLE_REASONS.
func LegacyInstall() DCGMInstall { return DCGMInstall{HostLabel: dcgm.LabelHostnameOld} }

func (i DCGMInstall) emits(field string) bool { return !i.DefaultCSV || dcgm.InDefaultCSV(field) }

// DCGMTarget is the scrape target labels of the GPU Operator's
// dcgm-exporter pod on node, for a ServiceMonitorSink behind a DCGMSink.
func DCGMTarget(node string) [][2]string {
	return ExporterTarget(DCGMNamespace, dcgmJob, dcgmJob, "9400", node)
}

// DCGMNamespace is the namespace of the GPU Operator's dcgm-exporter
// pods.
const DCGMNamespace = "gpu-operator"

const dcgmJob = "nvidia-dcgm-exporter"

// DCGMExporterPod is the name of the GPU Operator's dcgm-exporter pod on
// node, as DCGMTarget names it.
func DCGMExporterPod(node string) string { return dcgmJob + "-" + node }

// podUID stands in for the pod's UID, which the native series do not
// carry: stable per pod, as a UID is.
func podUID(p podRef) string { return "uid-" + p.namespace + "-" + p.pod }

// DCGMLayout is how a dcgm-exporter release and its flags put pods on
// series (internal/pkg/transformation/kubernetes.go, PodMapper.Process:
// kubernetes.go:331-514 at d5e5f51).
type DCGMLayout int

const (
	// DCGMNoVirtualGPUs is the default: a device ID maps to one pod, so
	// each series carries at most one; a time-sliced GPU shows one
	// arbitrary tenant, and the others none. toDeviceToPod
	// (kubernetes.go:712-918, d5e5f51) is a map[string]PodInfo: replica
	// IDs "<uuid>::<n>" are cut to the UUID (887-898) and a MIG device to
	// "<gpu>-<gpu instance>" (804-821, deviceinfo/device_info.go:621), so
	// the last pod listed wins; Process labels the metric whose
	// GetIDOfType (collector/types.go:79-91) is that key (kubernetes.go:414-452).
	DCGMNoVirtualGPUs DCGMLayout = iota
	// DCGMVirtualGPUs is --kubernetes-virtual-gpus from its introduction
	// (#432, 2025-01, first in 4.1.1-4.0.3) until #594: every pod
	// holding a replica gets a copy of the device's series (identical
	// values, vgpu set to the replica), the device's own series is
	// replaced by the copies, and a device no pod holds has none at all.
	// kubernetes.go:257-306 at 7b8b700 (copies 271-299, vgpu 289-291, the
	// counter's list replaced by the copies 301-303);
	// toDeviceToSharingPods and getSharedGPU (the "::<n>" replica) at
	// kubernetes.go:662-710 and 550-558 (d5e5f51).
	DCGMVirtualGPUs
	// DCGMVirtualGPUs2025 is --kubernetes-virtual-gpus from #594 (merged
	// 2026-03-24, fb5e3dc, first in 4.5.3-4.8.2, despite the name): GPU_UTIL
	// and FB_USED are the device's series plus one per pod of that pod's
	// own processes (percent, MiB; with pod_uid); the other fields are
	// copies per pod as before, and a device no pod holds keeps its series.
	// kubernetes.go:360-369 (device row plus per-process rows),
	// createPerProcessMetrics 201-252 (pod_uid 243), isPerProcessMetric in
	// process_metrics.go:30-32, the unheld device kept at 399-403 (d5e5f51).
	DCGMVirtualGPUs2025
)

// String names the layout as tests and notes do.
func (l DCGMLayout) String() string {
	return [...]string{"no-virtual-gpus", "virtual-gpus", "virtual-gpus-2025"}[l]
}
