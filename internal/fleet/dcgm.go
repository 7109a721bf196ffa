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
)

// DCGMSink turns a node's native series into what NVIDIA's dcgm-exporter,
// deployed by the GPU Operator with its Kubernetes pod mapping on, would
// have exposed for the same GPUs at the same step, and hands those to an
// inner Sink (typically a TSDBSink, which adds the staleness markers). It
// lets every analysis run against the dcgm-exporter schema on exactly the
// workload the native schema sees.
//
// What it reproduces, in dcgm-exporter's own names, units and labels:
//   - Labels gpu, UUID, device ("nvidia<index>"), modelName, Hostname,
//     pci_bus_id and DCGM_FI_DRIVER_VERSION on every series; GPU_I_PROFILE
//     and GPU_I_ID on MIG instances; pod, namespace and container when a
//     pod holds the device, and none of the three when none does.
//   - The default "flex" device mode: a GPU in MIG mode is reported per GPU
//     instance only (no parent row), and device-wide fields (power, energy,
//     XID, throttle reasons) repeat on every instance row.
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
//     instance rows like power does.
//   - The profiling fields of dcp-metrics-included.csv, from NVML GPM
//     (Hopper and newer, as with the native series), per whole GPU and per
//     MIG instance: DCGM_FI_PROF_SM_ACTIVE, DCGM_FI_PROF_SM_OCCUPANCY,
//     DCGM_FI_PROF_PIPE_TENSOR_ACTIVE and DCGM_FI_PROF_DRAM_ACTIVE. On an
//     instance SM_ACTIVE repeats GR_ENGINE_ACTIVE: NVML has one SM
//     activity per instance.
//   - --kubernetes-virtual-gpus: a time-sliced or MPS GPU is exposed once
//     per pod holding a replica, each copy with the whole device's values.
//     Without that flag dcgm-exporter labels a shared GPU with one
//     arbitrary pod, which no analysis can use. The replica number
//     dcgm-exporter puts in a vgpu label is not emitted: the native series
//     do not carry it and nothing reads it.
//   - A lost or hung GPU: DCGM's readings come back blank and dcgm-exporter
//     skips blank values, so only DCGM_FI_DEV_XID_ERRORS, which DCGM keeps
//     from the driver's event stream, remains. A GPU lost without an XID 79
//     thus simply vanishes from dcgm-exporter's data.
type DCGMSink struct {
	inner Sink
	// DropUnallocated reproduces dcgm-exporter's --kubernetes-virtual-gpus
	// mode exactly: it rebuilds each metric list from the pods holding the
	// device, so a device no pod holds has no series at all. Off by
	// default, because unallocated capacity would then be invisible; on,
	// it shows what that costs.
	DropUnallocated bool

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
	return &DCGMSink{inner: inner, step: map[string]*dcgmGPU{}, xidCounts: map[string]map[string]float64{},
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
}

type dcgmInstance struct {
	id, profile                 string
	used, total, grEngineActive float64
	occupancy, tensor, dram     float64
}

type podRef struct{ namespace, pod, container string }

func newDCGMGPU() *dcgmGPU {
	nan := math.NaN()
	return &dcgmGPU{util: nan, memUsed: nan, memTotal: nan, memReserved: nan, power: nan, energy: nan,
		temp: nan, smClock: nan, memClock: nan, smActive: nan, smOccupancy: nan, tensor: nan, dram: nan,
		eccSBE: nan, eccDBE: nan, remapCorr: nan, remapUncorr: nan, remapFailed: nan,
		xid: map[string]float64{}, instances: map[string]*dcgmInstance{}, holders: map[string][]podRef{}}
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
	case "gpulens_gpu_info":
		g.pciBusID, g.driver, g.mig = label(lbls, "pci_bus_id"), label(lbls, "driver_version"), label(lbls, "mig_mode") == "true"
	case "gpulens_gpu_up":
		g.up = v == 1
	case "gpulens_gpu_utilization_ratio":
		g.util = v
	case "gpulens_gpu_memory_used_bytes":
		g.memUsed = v
	case "gpulens_gpu_memory_total_bytes":
		g.memTotal = v
	case "gpulens_gpu_memory_reserved_bytes":
		g.memReserved = v
	case "gpulens_gpu_power_watts":
		g.power = v
	case "gpulens_gpu_energy_joules_total":
		g.energy = v
	case "gpulens_gpu_temperature_celsius":
		g.temp = v
	case "gpulens_gpu_clock_hertz":
		switch label(lbls, "clock") {
		case "sm":
			g.smClock = v / 1e6
		case "memory":
			g.memClock = v / 1e6
		}
	case "gpulens_gpu_sm_active_ratio":
		g.smActive = v
	case "gpulens_gpu_sm_occupancy_ratio":
		g.smOccupancy = v
	case "gpulens_gpu_tensor_active_ratio":
		g.tensor = v
	case "gpulens_gpu_dram_active_ratio":
		g.dram = v
	case "gpulens_gpu_ecc_errors_total":
		if label(lbls, "type") == "uncorrected" {
			g.eccDBE = v
		} else {
			g.eccSBE = v
		}
	case "gpulens_gpu_remapped_rows":
		if label(lbls, "type") == "uncorrectable" {
			g.remapUncorr = v
		} else {
			g.remapCorr = v
		}
	case "gpulens_gpu_row_remap_failed":
		g.remapFailed = v
	case "gpulens_gpu_throttle_active":
		g.throttleKnown = true
		if v == 1 {
			g.throttle |= throttleBits[label(lbls, "reason")]
		}
	case "gpulens_gpu_xid_errors_total":
		g.xid[label(lbls, "xid")] = v
	case "gpulens_mig_info":
		g.instance(label(lbls, "gpu_instance")).profile = label(lbls, "mig_profile")
	case "gpulens_mig_memory_used_bytes":
		g.instance(label(lbls, "gpu_instance")).used = v
	case "gpulens_mig_memory_total_bytes":
		g.instance(label(lbls, "gpu_instance")).total = v
	case "gpulens_mig_sm_active_ratio":
		// DCGM's per-instance graphics-engine activity; NVML has only GPM
		// SM activity per instance, the closest reading.
		g.instance(label(lbls, "gpu_instance")).grEngineActive = v
	case "gpulens_mig_sm_occupancy_ratio":
		g.instance(label(lbls, "gpu_instance")).occupancy = v
	case "gpulens_mig_tensor_active_ratio":
		g.instance(label(lbls, "gpu_instance")).tensor = v
	case "gpulens_mig_dram_active_ratio":
		g.instance(label(lbls, "gpu_instance")).dram = v
	case "gpulens_container_gpu_allocation_ratio":
		// The allocation series are the kubelet's pod-resources view, the
		// same one dcgm-exporter's pod mapper reads.
		gi := label(lbls, "gpu_instance")
		p := podRef{label(lbls, "namespace"), label(lbls, "pod"), label(lbls, "container")}
		if !slices.Contains(g.holders[gi], p) {
			g.holders[gi] = append(g.holders[gi], p)
		}
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
		holders := e.holders
		if len(holders) == 0 {
			if s.DropUnallocated {
				continue
			}
			holders = []podRef{{}}
		}
		slices.SortFunc(holders, func(a, b podRef) int {
			return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.pod, b.pod), cmp.Compare(a.container, b.container))
		})
		for _, p := range holders {
			emit := func(name string, v float64) error {
				if math.IsNaN(v) {
					return nil
				}
				return s.inner.Append(ts, name, s.labels(g, e.in, p), v)
			}
			if err := emit("DCGM_FI_DEV_XID_ERRORS", xid); err != nil {
				return err
			}
			if !g.up {
				continue // blank readings: skipped by dcgm-exporter
			}
			var err error
			if e.in == nil {
				err = emitAll(emit,
					"DCGM_FI_DEV_GPU_UTIL", math.Round(g.util*100),
					"DCGM_FI_PROF_GR_ENGINE_ACTIVE", g.util,
					"DCGM_FI_DEV_FB_USED", mibFloor(g.memUsed),
					"DCGM_FI_DEV_FB_FREE", mibFloor(g.memTotal-g.memUsed-zeroIfNaN(g.memReserved)),
					"DCGM_FI_DEV_FB_RESERVED", mibFloor(g.memReserved),
					"DCGM_FI_PROF_SM_ACTIVE", g.smActive,
					"DCGM_FI_PROF_SM_OCCUPANCY", g.smOccupancy,
					"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", g.tensor,
					"DCGM_FI_PROF_DRAM_ACTIVE", g.dram)
			} else {
				err = emitAll(emit,
					"DCGM_FI_PROF_GR_ENGINE_ACTIVE", e.in.grEngineActive,
					"DCGM_FI_PROF_SM_ACTIVE", e.in.grEngineActive,
					"DCGM_FI_PROF_SM_OCCUPANCY", e.in.occupancy,
					"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", e.in.tensor,
					"DCGM_FI_PROF_DRAM_ACTIVE", e.in.dram,
					"DCGM_FI_DEV_FB_USED", mibFloor(e.in.used),
					"DCGM_FI_DEV_FB_FREE", mibFloor(e.in.total-e.in.used))
			}
			if err != nil {
				return err
			}
			throttle := math.NaN()
			if g.throttleKnown {
				throttle = float64(g.throttle)
			}
			if err := emitAll(emit,
				"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", throttle,
				"DCGM_FI_DEV_POWER_USAGE", g.power,
				"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", math.Round(g.energy*1000),
				"DCGM_FI_DEV_GPU_TEMP", g.temp,
				"DCGM_FI_DEV_SM_CLOCK", math.Round(g.smClock),
				"DCGM_FI_DEV_MEM_CLOCK", math.Round(g.memClock),
				"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", g.eccSBE,
				"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", g.eccDBE,
				"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", g.remapCorr,
				"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", g.remapUncorr,
				"DCGM_FI_DEV_ROW_REMAP_FAILURE", g.remapFailed); err != nil {
				return err
			}
		}
	}
	return nil
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
func (s *DCGMSink) labels(g *dcgmGPU, in *dcgmInstance, p podRef) []*dto.LabelPair {
	s.lbuf = s.lbuf[:0]
	add := func(name, value string) {
		s.lbuf = append(s.lbuf, &dto.LabelPair{Name: &name, Value: &value})
	}
	add("gpu", g.index)
	add("UUID", g.uuid)
	add("device", "nvidia"+g.index)
	add("modelName", g.model)
	add("Hostname", g.node)
	add("pci_bus_id", g.pciBusID)
	add("DCGM_FI_DRIVER_VERSION", g.driver)
	if in != nil {
		add("GPU_I_PROFILE", in.profile)
		add("GPU_I_ID", in.id)
	}
	if p.pod != "" {
		add("pod", p.pod)
		add("namespace", p.namespace)
		add("container", p.container)
	}
	return s.lbuf
}
