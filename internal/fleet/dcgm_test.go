package fleet

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gpulens/gpulens/analyzer/query"
	"github.com/gpulens/gpulens/analyzer/schema"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
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

func runDCGM(t *testing.T, dropUnallocated bool) (native, dcgm []sample) {
	t.Helper()
	sc, err := sim.Parse([]byte(dcgmScenario), "dcgm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	err = Run(context.Background(), Options{Scenario: sc, Start: dcgmStart, End: dcgmStart.Add(6 * time.Minute), Step: time.Minute},
		func(string) Sink {
			d := NewDCGMSink(capture{&mu, &dcgm, dcgmStart, time.Minute})
			d.DropUnallocated = dropUnallocated
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
	native, dcgm := runDCGM(t, false)
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

	// Time-slicing: the device's values once per pod holding a replica.
	ts := pick(dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "2"})
	if len(ts) != 2 || ts[0].labels["pod"] == ts[1].labels["pod"] || ts[0].value != ts[1].value {
		t.Errorf("time-sliced GPU: %v, want the same value for ts-1 and ts-2", ts)
	}
	if want := math.Floor(nat("gpulens_gpu_memory_used_bytes", "2") / (1 << 20)); ts[0].value != want {
		t.Errorf("time-sliced FB_USED %v, want the device's %v", ts[0].value, want)
	}

	// An unallocated GPU is reported without pod labels.
	if s := one(t, dcgm, "DCGM_FI_DEV_FB_USED", step, map[string]string{"gpu": "3"}); s.labels["pod"] != "" {
		t.Errorf("unallocated GPU: %v", s)
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

func TestDCGMSinkDropUnallocated(t *testing.T) {
	_, dcgm := runDCGM(t, true)
	for _, s := range dcgm {
		if s.labels["pod"] == "" {
			t.Fatalf("series of an unallocated device kept: %v", s)
		}
	}
	if len(pick(dcgm, "DCGM_FI_DEV_FB_USED", 2, map[string]string{"gpu": "1"})) != 1 {
		t.Error("the held MIG instance lost its series too")
	}
}

// TestDCGMSinkThroughTSDB composes the sink with TSDBSink and reads the
// result back with the dcgm-exporter schema: the schema is detected, and
// allocations and GPUs come out as the scenario has them.
func TestDCGMSinkThroughTSDB(t *testing.T) {
	sc, err := sim.Parse([]byte(dcgmScenario), "dcgm.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var n atomic.Int64
	end := dcgmStart.Add(time.Hour)
	if err := Run(ctx, Options{Scenario: sc, Start: dcgmStart, End: end, Step: time.Minute},
		func(string) Sink { return NewDCGMSink(NewTSDBSink(ctx, db, &n)) }); err != nil {
		t.Fatal(err)
	}
	if n.Load() == 0 {
		t.Fatal("no samples written")
	}
	sch, err := schema.Detect(ctx, db, dcgmStart, end)
	if err != nil || sch.Name() != schema.NameDCGM {
		t.Fatalf("detected %v, %v; want dcgm-exporter", sch, err)
	}
	res, err := query.Analyze(ctx, db, sch, query.Window{Start: dcgmStart, End: end})
	if err != nil {
		t.Fatal(err)
	}
	sharing := map[string]string{}
	for _, a := range res.Allocations {
		sharing[a.Pod] = a.Sharing
	}
	want := map[string]string{"whole": "none", "slice": "mig", "ts-1": "time-slicing", "ts-2": "time-slicing", "doomed": "none"}
	if fmt.Sprint(sharing) != fmt.Sprint(want) {
		t.Errorf("allocations by sharing %v, want %v", sharing, want)
	}
	var lost *query.GPU
	for i, g := range res.GPUs {
		if len(g.XIDCodes) > 0 && g.XIDCodes[0] == "79" {
			lost = &res.GPUs[i]
		}
	}
	if len(res.GPUs) != 5 || lost == nil || lost.DownSteps < 50 {
		t.Errorf("GPUs %d (want 5), lost GPU %+v: want down from minute 4", len(res.GPUs), lost)
	}
}
