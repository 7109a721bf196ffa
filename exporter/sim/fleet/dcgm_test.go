package fleet

import (
	"context"
	"fmt"
	dcgmfields "github.com/gpulens/gpulens/signals/dcgm"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	fleetmodel "github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/vocab"
)

// sample is one appended sample with a copy of its labels.
type sample struct {
	step   int
	name   string
	labels map[string]string
	value  float64
}

func (s sample) String() string {
	var kv []string
	for k, v := range s.labels {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return fmt.Sprintf("%s{%s} %g @%d", s.name, strings.Join(kv, ","), s.value, s.step)
}

// capture keeps every sample, copying the reused labels.
type capture struct {
	mu      *sync.Mutex
	samples *[]sample
	start   time.Time
	step    time.Duration
}

func (c capture) Append(ts time.Time, name string, lbls []*dto.LabelPair, v float64) error {
	m := map[string]string{}
	for _, l := range lbls {
		m[l.GetName()] = l.GetValue()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.samples = append(*c.samples, sample{int(ts.Sub(c.start) / c.step), name, m, v})
	return nil
}
func (capture) EndStep(time.Time) error { return nil }
func (capture) Close() error            { return nil }

// tee hands the native series to native and to a DCGMSink.
type tee struct {
	native Sink
	dcgm   *DCGMSink
}

func (t tee) Append(ts time.Time, name string, lbls []*dto.LabelPair, v float64) error {
	if err := t.native.Append(ts, name, lbls, v); err != nil {
		return err
	}
	return t.dcgm.Append(ts, name, lbls, v)
}
func (t tee) EndStep(ts time.Time) error { return t.dcgm.EndStep(ts) }
func (t tee) Close() error               { return t.dcgm.Close() }

const dcgmScenario = `
seed: 7
nodes:
  - name: n1
    system: dgxh100
    gpus: 5
    sharing:
      - {gpus: [1], mode: mig, mig: [3g.40gb, 1g.10gb]}
      - {gpus: [2], mode: time-slicing, replicas: 4}
    pods:
      - {namespace: a, name: whole, gpu: 0, load: training, utilization: 0.9, memory: 20GiB}
      - {namespace: a, name: slice, gpu: 1, instance: 0, load: inference, utilization: 0.5, memory: 10GiB}
      - {namespace: b, name: ts-1, gpu: 2, load: inference, memory: 10GiB}
      - {namespace: b, name: ts-2, gpu: 2, load: inference, memory: 12GiB}
      - {namespace: c, name: doomed, gpu: 4, load: inference, memory: 4GiB}
    faults:
      - {gpu: 0, kind: xid, xid: 13, at: 3m}
      - {gpu: 4, kind: xid, xid: 79, at: 4m}
`

var dcgmStart = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// runDCGM emulates an older release (LegacyInstall): a stable pod label
// and every label as it was, so that the layouts' figures are compared
// alone; TestDCGMSinkStockInstall covers what a current install changes.
func runDCGM(t *testing.T, layout DCGMLayout, serviceMonitor bool) (native, dcgm []sample) {
	return runDCGMInstall(t, layout, serviceMonitor, LegacyInstall())
}

func runDCGMInstall(t *testing.T, layout DCGMLayout, serviceMonitor bool, install DCGMInstall) (native, dcgm []sample) {
	t.Helper()
	sc, err := sim.Parse([]byte(dcgmScenario), "dcgm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	err = Run(context.Background(), Options{Scenario: sc, Start: dcgmStart, End: dcgmStart.Add(6 * time.Minute), Step: time.Minute},
		func(string) Sink {
			var inner Sink = capture{&mu, &dcgm, dcgmStart, time.Minute}
			if serviceMonitor {
				inner = NewServiceMonitorSink(inner, DCGMTarget("n1"))
			}
			d := NewDCGMSink(inner)
			d.Layout, d.Install = layout, install
			return tee{capture{&mu, &native, dcgmStart, time.Minute}, d}
		})
	if err != nil {
		t.Fatal(err)
	}
	return native, dcgm
}

func pick(ss []sample, name string, step int, match map[string]string) []sample {
	var out []sample
	for _, s := range ss {
		if s.name != name || (step >= 0 && s.step != step) {
			continue
		}
		ok := true
		for k, v := range match {
			if s.labels[k] != v {
				ok = false
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

func one(t *testing.T, ss []sample, name string, step int, match map[string]string) sample {
	t.Helper()
	got := pick(ss, name, step, match)
	if len(got) != 1 {
		t.Fatalf("%s%v at step %d: %d series, want 1: %v", name, match, step, len(got), got)
	}
	return got[0]
}

func TestDCGMSinkLayoutAndUnits(t *testing.T) {
	native, dcgm := runDCGM(t, DCGMNoVirtualGPUs, false)
	uuidOf := func(gpu string) string {
		return one(t, native, "gpulens_gpu_info", 0, map[string]string{"gpu": gpu}).labels["uuid"]
	}
	const step = 2

	// A whole GPU held by one pod: dcgm-exporter's full label layout.
	info := one(t, native, "gpulens_gpu_info", step, map[string]string{"gpu": "0"})
	fb := one(t, dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"UUID": uuidOf("0")})
	want := map[string]string{"gpu": "0", "UUID": uuidOf("0"), "device": "nvidia0", "modelName": info.labels["model"],
		"Hostname": "n1", "pci_bus_id": info.labels["pci_bus_id"], "DCGM_FI_DRIVER_VERSION": info.labels["driver_version"],
		"pod": "whole", "namespace": "a", "container": "main"}
	if fmt.Sprint(fb.labels) != fmt.Sprint(want) {
		t.Errorf("labels\n got %v\nwant %v", fb.labels, want)
	}
	// Units: percent, MiB, mJ; the framebuffer fields add up to the device.
	nat := func(name, gpu string) float64 {
		return one(t, native, name, step, map[string]string{"gpu": gpu}).value
	}
	match0 := map[string]string{"gpu": "0"}
	if got, want := one(t, dcgm, "DCGM_FI_DEV_GPU_UTIL", step, match0).value, math.Round(100*nat("gpulens_gpu_utilization_ratio", "0")); got != want || got < 50 {
		t.Errorf("GPU_UTIL %v, want %v (percent of a training load)", got, want)
	}
	if got, want := one(t, dcgm, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", step, match0).value, nat("gpulens_gpu_utilization_ratio", "0"); got != want {
		t.Errorf("GR_ENGINE_ACTIVE %v, want the 0..1 ratio %v", got, want)
	}
	if got, want := fb.value, math.Floor(nat("gpulens_gpu_memory_used_bytes", "0")/(1<<20)); got != want {
		t.Errorf("FB_USED %v MiB, want %v", got, want)
	}
	total := fb.value + one(t, dcgm, "DCGM_FI_DEV_FB_FREE", step, match0).value + one(t, dcgm, "DCGM_FI_DEV_FB_RESERVED", step, match0).value
	if d := nat("gpulens_gpu_memory_total_bytes", "0")/(1<<20) - total; d < 0 || d > 3 {
		t.Errorf("FB used+free+reserved %v MiB, device %v MiB", total, nat("gpulens_gpu_memory_total_bytes", "0")/(1<<20))
	}
	if got, want := one(t, dcgm, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", step, match0).value, math.Round(1000*nat("gpulens_gpu_energy_joules_total", "0")); got != want || got == 0 {
		t.Errorf("energy %v mJ, want %v", got, want)
	}
	if got, want := one(t, dcgm, "DCGM_FI_DEV_POWER_USAGE", step, match0).value, nat("gpulens_gpu_power_watts", "0"); got != want {
		t.Errorf("power %v W, want %v", got, want)
	}
	// The fields the dashboards chart: °C, MHz, counts; profiling on
	// whole GPUs (dgxh100 has GPM).
	for _, f := range []struct {
		dcgm, native string
		match        map[string]string
		scale        float64
	}{
		{"DCGM_FI_DEV_GPU_TEMP", "gpulens_gpu_temperature_celsius", nil, 1},
		{"DCGM_FI_DEV_SM_CLOCK", "gpulens_gpu_clock_hertz", map[string]string{"clock": "sm"}, 1e-6},
		{"DCGM_FI_DEV_MEM_CLOCK", "gpulens_gpu_clock_hertz", map[string]string{"clock": "memory"}, 1e-6},
		{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "gpulens_gpu_ecc_errors_total", map[string]string{"type": "uncorrected"}, 1},
		{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "gpulens_gpu_ecc_errors_total", map[string]string{"type": "corrected"}, 1},
		{"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "gpulens_gpu_remapped_rows", map[string]string{"type": "uncorrectable"}, 1},
		{"DCGM_FI_DEV_ROW_REMAP_FAILURE", "gpulens_gpu_row_remap_failed", nil, 1},
		{"DCGM_FI_PROF_SM_ACTIVE", "gpulens_gpu_sm_active_ratio", nil, 1},
		{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gpulens_gpu_tensor_active_ratio", nil, 1},
	} {
		m := map[string]string{"gpu": "0"}
		for k, v := range f.match {
			m[k] = v
		}
		want := one(t, native, f.native, step, m).value * f.scale
		if f.scale != 1 {
			want = math.Round(want)
		}
		if got := one(t, dcgm, f.dcgm, step, match0).value; got != want {
			t.Errorf("%s %v, want %v from %s", f.dcgm, got, want, f.native)
		}
	}
	// On MIG, per instance, from the instance's GPM readings.
	slice := map[string]string{"gpu": "1", "GPU_I_PROFILE": "3g.40gb"}
	nativeSlice := one(t, native, "gpulens_mig_tensor_active_ratio", step, map[string]string{"gpu": "1", "mig_profile": "3g.40gb"})
	if got := one(t, dcgm, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", step, slice).value; got != nativeSlice.value {
		t.Errorf("MIG PIPE_TENSOR_ACTIVE %v, want the instance's %v", got, nativeSlice.value)
	}
	var bits float64
	for _, s := range pick(native, "gpulens_gpu_throttle_active", step, match0) {
		if s.value == 1 {
			bits += map[string]float64{"gpu_idle": 1, "sw_power_cap": 4}[s.labels["reason"]]
		}
	}
	if got := one(t, dcgm, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", step, match0).value; got != bits {
		t.Errorf("throttle reasons %v, want bitmask %v", got, bits)
	}

	// MIG: one row per GPU instance, none for the parent; GPU_UTIL absent.
	mig := map[string]string{"gpu": "1"}
	for _, s := range dcgm {
		if s.labels["gpu"] == "1" && s.labels["GPU_I_ID"] == "" {
			t.Fatalf("MIG GPU has a parent row: %v", s)
		}
		if s.name == "DCGM_FI_DEV_GPU_UTIL" && s.labels["GPU_I_ID"] != "" {
			t.Fatalf("GPU_UTIL on a MIG instance: %v", s)
		}
	}
	used := pick(dcgm, "DCGM_FI_DEV_FB_USED", step, mig)
	if len(used) != 2 {
		t.Fatalf("MIG FB_USED: %v, want one per instance", used)
	}
	held := one(t, dcgm, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", step, map[string]string{"gpu": "1", "GPU_I_PROFILE": "3g.40gb"})
	if held.labels["pod"] != "slice" || held.value <= 0 || held.value > 1 {
		t.Errorf("held slice: %v", held)
	}
	free := one(t, dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "1", "GPU_I_PROFILE": "1g.10gb"})
	if _, ok := free.labels["pod"]; ok {
		t.Errorf("unallocated slice has a pod label: %v", free)
	}
	if len(pick(dcgm, "DCGM_FI_DEV_FB_RESERVED", step, mig)) != 0 {
		t.Error("FB_RESERVED on MIG instances")
	}
	if len(pick(dcgm, "DCGM_FI_DEV_POWER_USAGE", step, mig)) != 2 {
		t.Error("device-wide fields do not repeat on every MIG instance row")
	}

	// Time-slicing without virtual GPUs: one of the two tenants, with
	// the device's values.
	ts := pick(dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "2"})
	if len(ts) != 1 || ts[0].labels["pod"] != "ts-2" {
		t.Errorf("time-sliced GPU: %v, want one series, of the last pod listed", ts)
	}
	if want := math.Floor(nat("gpulens_gpu_memory_used_bytes", "2") / (1 << 20)); ts[0].value != want {
		t.Errorf("time-sliced FB_USED %v, want the device's %v", ts[0].value, want)
	}

	// XID: the last code, 0 before any, kept after.
	for st, want := range []float64{0, 0, 0, 13, 13, 13, 13} {
		if got := one(t, dcgm, "DCGM_FI_DEV_XID_ERRORS", st, match0).value; got != want {
			t.Errorf("XID at step %d: %v, want %v", st, got, want)
		}
	}
	// A GPU lost through XID 79 keeps only its XID series, still mapped to
	// its pod; everything else goes blank.
	for st := 4; st <= 6; st++ {
		var names []string
		for _, s := range dcgm {
			if s.step == st && s.labels["gpu"] == "4" {
				names = append(names, s.name)
				if s.labels["pod"] != "doomed" || s.value != 79 {
					t.Errorf("lost GPU at step %d: %v", st, s)
				}
			}
		}
		if !slices.Equal(names, []string{"DCGM_FI_DEV_XID_ERRORS"}) {
			t.Errorf("lost GPU at step %d: %v, want only its XID", st, names)
		}
	}
	if len(pick(dcgm, "DCGM_FI_DEV_FB_USED", 3, map[string]string{"gpu": "4", "pod": "doomed"})) != 1 {
		t.Error("the GPU was not reported before it was lost")
	}
}

// TestDCGMSinkLayouts checks what each dcgm-exporter layout writes for a
// time-sliced GPU (gpu 2: ts-1 and ts-2), an unheld GPU (gpu 3), and a
// held MIG instance beside a free one (gpu 1), against the native series.
func TestDCGMSinkLayouts(t *testing.T) {
	const step = 2
	mib := func(b float64) float64 { return math.Floor(b / (1 << 20)) }
	for _, tt := range []struct {
		layout DCGMLayout
		sm     bool
	}{{DCGMNoVirtualGPUs, false}, {DCGMVirtualGPUs, false}, {DCGMVirtualGPUs2025, false}, {DCGMNoVirtualGPUs, true}} {
		t.Run(fmt.Sprintf("%s servicemonitor=%v", tt.layout, tt.sm), func(t *testing.T) {
			native, dcgm := runDCGM(t, tt.layout, tt.sm)
			podLabel := "pod"
			if tt.sm {
				podLabel = "exported_pod"
			}
			nat := func(name string, match map[string]string) float64 {
				return one(t, native, name, step, match).value
			}
			device := mib(nat("gpulens_gpu_memory_used_bytes", map[string]string{"gpu": "2"}))
			byPod := map[string]sample{}
			for _, s := range pick(dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "2"}) {
				byPod[s.labels[podLabel]] = s
			}
			own := func(pod string) float64 {
				return mib(nat("gpulens_container_gpu_memory_used_bytes", map[string]string{"gpu": "2", "pod": pod}))
			}
			switch tt.layout {
			case DCGMNoVirtualGPUs:
				if len(byPod) != 1 || byPod["ts-2"].value != device {
					t.Errorf("FB_USED %v, want only ts-2 with the device's %v", byPod, device)
				}
			case DCGMVirtualGPUs:
				if len(byPod) != 2 || byPod["ts-1"].value != device || byPod["ts-2"].value != device ||
					byPod["ts-1"].labels["vgpu"] == byPod["ts-2"].labels["vgpu"] || byPod["ts-1"].labels["vgpu"] == "" {
					t.Errorf("FB_USED %v, want a copy of the device's %v per pod, each with its vgpu", byPod, device)
				}
			case DCGMVirtualGPUs2025:
				if len(byPod) != 3 || byPod[""].value != device || byPod["ts-1"].value != own("ts-1") || byPod["ts-2"].value != own("ts-2") ||
					byPod["ts-1"].value+byPod["ts-2"].value > device || byPod["ts-1"].labels["pod_uid"] == "" {
					t.Errorf("FB_USED %v, want the device's %v and each pod's own (%v, %v) with pod_uid", byPod, device, own("ts-1"), own("ts-2"))
				}
				// Fields without per-process values are copies, and the
				// device row does not carry them.
				power := pick(dcgm, "DCGM_FI_DEV_POWER_USAGE", step, map[string]string{"gpu": "2"})
				if len(power) != 2 || power[0].labels["pod"] == "" || power[0].value != power[1].value {
					t.Errorf("POWER_USAGE %v, want one copy per pod", power)
				}
			}
			unheld := pick(dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "3"})
			if want := map[bool]int{true: 0, false: 1}[tt.layout == DCGMVirtualGPUs]; len(unheld) != want {
				t.Errorf("unheld GPU: %v, want %d series", unheld, want)
			}
			freeSlice := pick(dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "1", "GPU_I_PROFILE": "1g.10gb"})
			if want := map[bool]int{true: 0, false: 1}[tt.layout == DCGMVirtualGPUs]; len(freeSlice) != want {
				t.Errorf("free MIG slice: %v, want %d series", freeSlice, want)
			}
			if tt.sm {
				// Relabelled: the tenant moves to exported_*, pod is the
				// exporter's on every series, and up names the target.
				for _, s := range dcgm {
					if s.name != "up" && s.labels["pod"] != "nvidia-dcgm-exporter-n1" {
						t.Fatalf("series without the target's pod: %v", s)
					}
				}
				if up := pick(dcgm, "up", step, map[string]string{"pod": "nvidia-dcgm-exporter-n1", "job": "nvidia-dcgm-exporter"}); len(up) != 1 {
					t.Errorf("up: %v", up)
				}
				if whole := one(t, dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "0"}); whole.labels["exported_pod"] != "whole" {
					t.Errorf("whole GPU: %v, want exported_pod whole", whole)
				}
			}
		})
	}
}

// TestDCGMSinkThroughTSDB composes the sink with TSDBSink in every layout
// and reads the result back with the dcgm-exporter schema: the schema is
// detected, and allocations and GPUs come out as each layout lets them.
func TestDCGMSinkThroughTSDB(t *testing.T) {
	sc, err := sim.Parse([]byte(dcgmScenario), "dcgm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	shared := map[string]vocab.Sharing{"whole": "none", "slice": "mig", "ts-1": "time-slicing", "ts-2": "time-slicing", "doomed": "none"}
	// Without virtual GPUs only the last tenant listed is seen, alone.
	onePod := map[string]vocab.Sharing{"whole": "none", "slice": "mig", "ts-2": "none", "doomed": "none"}
	// A current install's flapping pod label names both co-tenants, in
	// turn: read as the GPU's sharing, as the virtual-GPU layouts show it.
	flapping := shared
	for _, tt := range []struct {
		layout  DCGMLayout
		sm      bool
		sharing map[string]vocab.Sharing
		gpus    int
		stock   bool
	}{
		{DCGMNoVirtualGPUs, false, onePod, 5, false},
		{DCGMNoVirtualGPUs, true, onePod, 5, false},
		{DCGMNoVirtualGPUs, true, flapping, 5, true},
		{DCGMVirtualGPUs, false, shared, 4, false}, // the unheld GPU vanishes
		{DCGMVirtualGPUs2025, false, shared, 5, false},
		{DCGMVirtualGPUs2025, true, shared, 5, true},
	} {
		t.Run(fmt.Sprintf("%s servicemonitor=%v stock=%v", tt.layout, tt.sm, tt.stock), func(t *testing.T) {
			db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			var n atomic.Int64
			end := dcgmStart.Add(time.Hour)
			if err := Run(ctx, Options{Scenario: sc, Start: dcgmStart, End: end, Step: time.Minute},
				func(node string) Sink {
					var inner Sink = NewTSDBSink(ctx, db, &n)
					if tt.sm {
						inner = NewServiceMonitorSink(inner, DCGMTarget(node))
					}
					d := NewDCGMSink(inner)
					d.Layout = tt.layout
					if !tt.stock {
						d.Install = LegacyInstall()
					}
					return d
				}); err != nil {
				t.Fatal(err)
			}
			sch, err := source.Detect(ctx, db, dcgmStart, end, nil)
			if err != nil || sch.Name() != dcgmfields.SchemaName {
				t.Fatalf("detected %v, %v; want dcgm-exporter", sch, err)
			}
			res, err := query.Analyze(ctx, db, sch, fleetmodel.Window{Start: dcgmStart, End: end})
			if err != nil {
				t.Fatal(err)
			}
			sharing := map[string]vocab.Sharing{}
			for _, a := range res.Allocations {
				sharing[a.Pod] = a.Sharing
			}
			if fmt.Sprint(sharing) != fmt.Sprint(tt.sharing) {
				t.Errorf("allocations by sharing %v, want %v", sharing, tt.sharing)
			}
			var lost *fleetmodel.GPU
			for i, g := range res.GPUs {
				if len(g.XIDCodes) > 0 && g.XIDCodes[0] == "79" {
					lost = &res.GPUs[i]
				}
			}
			// The data-coverage notes name the layout and the relabelling.
			notes := strings.Join(res.Notes, "\n")
			layoutNote := map[DCGMLayout]string{DCGMNoVirtualGPUs: "at most one pod per device", DCGMVirtualGPUs: "on every tenant",
				DCGMVirtualGPUs2025: "per-tenant figures"}[tt.layout]
			if !strings.Contains(notes, layoutNote) || strings.Contains(notes, "relabelled by a ServiceMonitor") != tt.sm {
				t.Errorf("notes %q: want the layout (%q) and the relabelling only when there was one", notes, layoutNote)
			}
			if len(res.GPUs) != tt.gpus || lost == nil || lost.DownSteps < 50 {
				t.Errorf("GPUs %d (want %d), lost GPU %+v: want down from minute 4", len(res.GPUs), tt.gpus, lost)
			}
		})
	}
}

// TestDCGMSinkStockInstall: what a current GPU Operator install writes
// beyond the layout, as dcgm-exporter's code writes it (signals/dcgm):
// hostname, err_code and err_msg on the XID field, DCGM 3.3's
// CLOCKS_EVENT_REASONS, the default layout's pod label moving between a
// time-sliced GPU's co-tenants, and only the fields of
// dcp-metrics-included.csv.
func TestDCGMSinkStockInstall(t *testing.T) {
	native, out := runDCGMInstall(t, DCGMNoVirtualGPUs, false, StockInstall())
	for _, s := range out {
		if s.labels["Hostname"] != "" || s.labels["hostname"] != "n1" {
			t.Fatalf("%s %v: want hostname n1 and no Hostname", s.name, s.labels)
		}
		if !dcgmfields.InDefaultCSV(s.name) {
			t.Errorf("%s is emitted, but not in the default counters file", s.name)
		}
	}
	for _, s := range pick(out, dcgmfields.XIDErrors, -1, nil) {
		if s.labels["err_code"] != fmt.Sprint(s.value) || s.labels["err_msg"] == "" {
			t.Errorf("XID %v = %v: want err_code of the value and an err_msg", s.labels, s.value)
		}
	}
	if len(pick(out, dcgmfields.ClocksEventReasons, -1, nil))+len(pick(out, dcgmfields.ClockThrottleReasons, -1, nil)) != 0 {
		t.Errorf("throttle reasons emitted, but outside the default counters file")
	}
	// The time-sliced GPU's holders, as the kubelet lists them sorted
	// (ts-1, ts-2): step i shows holder i mod 2, and only that one.
	uuid := one(t, native, "gpulens_gpu_info", 0, map[string]string{"gpu": "2"}).labels["uuid"]
	for step := 0; step < 6; step++ {
		rows := pick(out, dcgmfields.FBUsed, step, map[string]string{"UUID": uuid})
		want := []string{"ts-1", "ts-2"}[step%2]
		if len(rows) != 1 || rows[0].labels["pod"] != want {
			t.Errorf("step %d: FB_USED rows %v, want one with pod %s", step, rows, want)
		}
	}
	// Every other install keeps Hostname and a stable pod label.
	_, legacy := runDCGMInstall(t, DCGMNoVirtualGPUs, false, LegacyInstall())
	if got := one(t, legacy, dcgmfields.FBUsed, 3, map[string]string{"gpu": "2"}); got.labels["Hostname"] != "n1" || got.labels["pod"] != "ts-2" {
		t.Errorf("legacy: %v, want Hostname n1 and ts-2", got.labels)
	}
}

// TestDCGMSinkRenamedSharedResource: with the device plugin's
// renameByDefault, time-sliced GPUs are nvidia.com/gpu.shared, which
// dcgm-exporter's pod mapper does not read: the time-sliced GPU 2 of the
// scenario (ts-1 and ts-2) keeps its device series with no pod, in every
// layout, while the whole GPU 0 keeps its tenant.
func TestDCGMSinkRenamedSharedResource(t *testing.T) {
	const step = 2
	install := StockInstall()
	install.RenamedSharedResource = true
	for _, layout := range []DCGMLayout{DCGMNoVirtualGPUs, DCGMVirtualGPUs, DCGMVirtualGPUs2025} {
		t.Run(layout.String(), func(t *testing.T) {
			_, dcgm := runDCGMInstall(t, layout, false, install)
			shared := pick(dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "2"})
			// As an unheld GPU: its device row, none at all where the
			// copies replace the device's series (virtual-gpus).
			want := map[bool]int{true: 0, false: 1}[layout == DCGMVirtualGPUs]
			if len(shared) != want || (want == 1 && shared[0].labels["pod"] != "") {
				t.Errorf("time-sliced GPU: %v, want %d device series without a pod", shared, want)
			}
			var whole bool
			for _, s := range pick(dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "0"}) {
				whole = whole || s.labels["pod"] == "whole"
			}
			if !whole {
				t.Error("the whole GPU lost its tenant")
			}
		})
	}
}
