package collector

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/exporter/podresources/podresourcestest"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fakeBackend hands out prepared snapshots; it stands in for NVML when the
// test is about encoding, not reading.
type fakeBackend struct {
	mu    sync.Mutex
	snap  *gpu.Snapshot
	err   error
	calls int
}

func (f *fakeBackend) Name() string { return "fake" }
func (f *fakeBackend) Close() error { return nil }
func (f *fakeBackend) Sample(context.Context) (*gpu.Snapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.snap, f.err
}

func na(d *gpu.Device) {
	d.Utilization, d.MemoryUtilization = gpu.NA, gpu.NA
	d.SMActive, d.SMOccupancy, d.TensorActive, d.DRAMActive = gpu.NA, gpu.NA, gpu.NA, gpu.NA
	d.MemoryUsedBytes, d.MemoryTotalBytes, d.MemoryReservedBytes = gpu.NA, gpu.NA, gpu.NA
	d.PowerWatts, d.EnergyJoules, d.TemperatureC, d.SMClockHz, d.MemClockHz = gpu.NA, gpu.NA, gpu.NA, gpu.NA, gpu.NA
	d.ECCCorrected, d.ECCUncorrected = gpu.NA, gpu.NA
}

// testSnapshot has one busy whole GPU with GPM, one MIG GPU with two
// instances, one A100-like GPU without GPM or ECC support, and one lost GPU.
func testSnapshot() *gpu.Snapshot {
	busy := gpu.Device{Index: 0, UUID: "GPU-00000000-0000-0000-0000-000000000000", Model: "NVIDIA H100 80GB HBM3",
		PCIBusID: "00000000:18:00.0", Up: true,
		Utilization: 0.97, MemoryUtilization: 0.41, SMActive: 0.88, SMOccupancy: 0.52, TensorActive: 0.61, DRAMActive: 0.33,
		MemoryUsedBytes: 64 << 30, MemoryTotalBytes: 80 << 30, MemoryReservedBytes: 512 << 20,
		PowerWatts: 612.5, EnergyJoules: 123456.789, TemperatureC: 71, SMClockHz: 1.98e9, MemClockHz: 2.619e9,
		ThrottleReasons: 0x4, ThrottleValid: true, ECCCorrected: 3, ECCUncorrected: 0,
		RemappedRowsCorrectable: 1, RemappedRowsValid: true,
		XIDErrors: map[uint64]uint64{13: 2},
		Processes: []gpu.Process{{PID: 4242, GPUInstanceID: -1, ComputeInstanceID: -1, MemoryUsedBytes: 64 << 30, SMUtilization: 0.97}},
	}
	mig := gpu.Device{Index: 1, UUID: "GPU-11111111-1111-1111-1111-111111111111", Model: "NVIDIA H100 80GB HBM3",
		PCIBusID: "00000000:2A:00.0", MIGMode: true, MIGComputeSlices: 7, Up: true}
	na(&mig)
	mig.MemoryUsedBytes, mig.MemoryTotalBytes, mig.PowerWatts = 30<<30, 80<<30, 310
	mig.Instances = []gpu.Instance{
		{UUID: "MIG-aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa", GPUInstanceID: 1, ComputeInstanceID: 0, Profile: "3g.40gb", Slices: 3, MemorySlices: 4,
			MemoryUsedBytes: 20 << 30, MemoryTotalBytes: 40 << 30, SMActive: 0.7, SMOccupancy: 0.4, TensorActive: 0.5, DRAMActive: 0.2},
		{UUID: "MIG-bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb", GPUInstanceID: 9, ComputeInstanceID: 0, Profile: "1g.10gb", Slices: 1, MemorySlices: 1,
			MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 10 << 30, SMActive: gpu.NA, SMOccupancy: gpu.NA, TensorActive: gpu.NA, DRAMActive: gpu.NA},
	}
	old := gpu.Device{Index: 2, UUID: "GPU-22222222-2222-2222-2222-222222222222", Model: "NVIDIA A100-SXM4-80GB",
		PCIBusID: "00000000:3B:00.0", Up: true}
	na(&old)
	old.Utilization, old.MemoryUsedBytes, old.MemoryTotalBytes = 0, 1<<20, 80<<30
	lost := gpu.Device{Index: 3, UUID: "GPU-33333333-3333-3333-3333-333333333333", Model: "NVIDIA H100 80GB HBM3",
		PCIBusID: "00000000:4C:00.0", Up: false, Err: "GPU is lost", XIDErrors: map[uint64]uint64{79: 1}}
	na(&lost)
	return &gpu.Snapshot{
		Time: time.Unix(1700000000, 0), DriverVersion: "550.54.15", CUDAVersion: "12.4", NVMLVersion: "12.550.54.15",
		Devices: []gpu.Device{busy, mig, old, lost},
		Errors:  map[string]int{"nvmlDeviceGetPowerUsage": 2},
	}
}

// exposition renders only the per-sample families: self metrics carry
// durations that vary from run to run.
func exposition(t *testing.T, s *Sampler) []byte {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(s)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var buf bytes.Buffer
	for _, mf := range mfs {
		if volatileSelfMetric(mf.GetName()) {
			continue
		}
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// volatileSelfMetric reports the self-metrics that vary from run to run.
func volatileSelfMetric(name string) bool {
	switch name {
	case "gpulens_exporter_collection_duration_seconds", "gpulens_exporter_last_collection_timestamp_seconds",
		"gpulens_exporter_collections_total", "gpulens_exporter_nvml_errors_total":
		return true
	}
	return false
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output; rerun with -update if the change is intended\n--- got\n%s", path, got)
	}
}

func TestGoldenExposition(t *testing.T) {
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}, Node: "node-a"})
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	golden(t, "snapshot.golden.prom", exposition(t, s))
}

func TestSeriesRules(t *testing.T) {
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}, Node: "node-a"})
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := string(exposition(t, s))
	cases := []struct {
		name, line string
		present    bool
	}{
		{"lost GPU is up 0", `gpulens_gpu_up{gpu="3",model="NVIDIA H100 80GB HBM3",node="node-a",uuid="GPU-33333333-3333-3333-3333-333333333333"} 0`, true},
		{"lost GPU keeps its XID count", `gpulens_gpu_xid_errors_total{gpu="3",model="NVIDIA H100 80GB HBM3",node="node-a",uuid="GPU-33333333-3333-3333-3333-333333333333",xid="79"} 1`, true},
		{"lost GPU has no stale memory", `gpulens_gpu_memory_total_bytes{gpu="3"`, false},
		{"NA utilization in MIG mode is absent", `gpulens_gpu_utilization_ratio{gpu="1"`, false},
		{"zero utilization is present", `gpulens_gpu_utilization_ratio{gpu="2",model="NVIDIA A100-SXM4-80GB",node="node-a",uuid="GPU-22222222-2222-2222-2222-222222222222"} 0`, true},
		{"no GPM on A100", `gpulens_gpu_sm_active_ratio{gpu="2"`, false},
		{"throttle reason bit set", `reason="sw_power_cap",uuid="GPU-00000000-0000-0000-0000-000000000000"} 1`, true},
		{"throttle reason bit clear", `reason="hw_slowdown",uuid="GPU-00000000-0000-0000-0000-000000000000"} 0`, true},
		{"MIG instance series", `gpulens_mig_memory_used_bytes{compute_instance="0",gpu="1",gpu_instance="1",mig_profile="3g.40gb",mig_uuid="MIG-aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa",model="NVIDIA H100 80GB HBM3",node="node-a",uuid="GPU-11111111-1111-1111-1111-111111111111"} 2.147483648e+10`, true},
		{"MIG slices", `gpulens_mig_compute_slices{compute_instance="0",gpu="1",gpu_instance="9"`, true},
		{"energy is a counter in joules", "# TYPE gpulens_gpu_energy_joules_total counter", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := strings.Contains(out, c.line); got != c.present {
				t.Errorf("contains %q = %v, want %v", c.line, got, c.present)
			}
		})
	}
}

func TestBackendFailureDropsSeriesAndIsUnhealthy(t *testing.T) {
	fb := &fakeBackend{snap: testSnapshot()}
	s := New(Options{Backend: fb, Node: "n"})
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Healthy(); err != nil {
		t.Fatalf("healthy after a good sample: %v", err)
	}
	fb.mu.Lock()
	fb.snap, fb.err = nil, errors.New("NVML_ERROR_DRIVER_NOT_LOADED")
	fb.mu.Unlock()
	if err := s.SampleOnce(context.Background()); err == nil {
		t.Fatal("want the backend error")
	}
	if err := s.Healthy(); err == nil || !strings.Contains(err.Error(), "DRIVER_NOT_LOADED") {
		t.Fatalf("Healthy() = %v, want the backend error", err)
	}
	if n := testutil.CollectAndCount(s, "gpulens_gpu_up"); n != 0 {
		t.Errorf("%d gpulens_gpu_up series after a failed collection, want 0 (no stale series)", n)
	}
	if n := testutil.ToFloat64(s.self.collections.WithLabelValues("failure")); n != 1 {
		t.Errorf("failure count %v, want 1", n)
	}
}

func TestStaleCollectionIsUnhealthy(t *testing.T) {
	now := time.Unix(1000, 0)
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}, Interval: 10 * time.Second,
		Now: func() time.Time { return now }})
	if err := s.Healthy(); err == nil {
		t.Fatal("healthy before the first collection")
	}
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	now = now.Add(29 * time.Second)
	if err := s.Healthy(); err != nil {
		t.Fatalf("29s after a 10s-interval sample: %v", err)
	}
	now = now.Add(2 * time.Second)
	if err := s.Healthy(); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("31s after: Healthy() = %v, want stale", err)
	}
}

func TestNVMLErrorsCountedByCall(t *testing.T) {
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}})
	for range 3 {
		if err := s.SampleOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := testutil.ToFloat64(s.self.nvmlErrors.WithLabelValues("nvmlDeviceGetPowerUsage")); got != 6 {
		t.Errorf("nvml errors = %v, want 6 (2 per sample)", got)
	}
}

// TestScrapeDoesNotSample guards the central promise: a scrape never reaches
// the backend.
func TestScrapeDoesNotSample(t *testing.T) {
	fb := &fakeBackend{snap: testSnapshot()}
	s := New(Options{Backend: fb})
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(s)
	for range 5 {
		if _, err := reg.Gather(); err != nil {
			t.Fatal(err)
		}
	}
	if fb.calls != 1 {
		t.Errorf("backend sampled %d times, want 1", fb.calls)
	}
}

// testAttribution allocates testSnapshot's busy GPU 0 and its first MIG
// instance to two pods, as the kubelet would report them.
func testAttribution(t *testing.T) *Attribution {
	t.Helper()
	list := &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		{Namespace: "team-a", Name: "trainer", Containers: []*podresourcesv1.ContainerResources{{Name: "main",
			Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: []string{"GPU-00000000-0000-0000-0000-000000000000"}}}}}},
		{Namespace: "team-b", Name: "server", Containers: []*podresourcesv1.ContainerResources{{Name: "main",
			Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "nvidia.com/mig-3g.40gb", DeviceIds: []string{"MIG-aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"}}}}}},
		// Through ResourceClaims: the A100 whole, the 1g.10gb instance.
		{Namespace: "team-c", Name: "chat", Containers: []*podresourcesv1.ContainerResources{{Name: "main",
			DynamicResources: []*podresourcesv1.DynamicResource{
				podresourcestest.Claim("team-c", "chat-gpu-7xk2p", podresources.DefaultDRADriver, "node-a/gpu-2"),
				podresourcestest.Claim("team-c", "chat-mig", podresources.DefaultDRADriver, "node-a/gpu-1-mig-1g10gb-19-6"),
			}}}},
	}}
	allocs, errs := podresources.FromResponses(time.Unix(1700000000, 0), list, &podresourcesv1.AllocatableResourcesResponse{},
		podresources.Selection{DRADrivers: []string{podresources.DefaultDRADriver}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return &Attribution{Allocations: func() *podresources.Allocations { return allocs }, Slices: testSlices{
		"gpu-2":                 {Type: sliceindex.TypeGPU, UUID: "GPU-22222222-2222-2222-2222-222222222222"},
		"gpu-1-mig-1g10gb-19-6": {Type: sliceindex.TypeMIG, UUID: "MIG-bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb", ParentUUID: "GPU-11111111-1111-1111-1111-111111111111", Profile: "1g.10gb"},
	}}
}

// testSlices is the GPU driver's ResourceSlices of node-a, by device name.
type testSlices map[string]sliceindex.Device

func (s testSlices) Lookup(k podresources.DRADevice) (sliceindex.Device, bool) {
	d, ok := s[k.Device]
	return d, ok && k.Pool == "node-a" && k.Driver == podresources.DefaultDRADriver
}

func TestContainerSeries(t *testing.T) {
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}, Node: "node-a", Attribution: testAttribution(t)})
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := string(exposition(t, s))
	for _, want := range []string{
		`gpulens_container_gpu_allocation_ratio{container="main",gpu="0",gpu_instance="",mig_profile="",model="NVIDIA H100 80GB HBM3",namespace="team-a",node="node-a",pod="trainer",sharing="none",uuid="GPU-00000000-0000-0000-0000-000000000000"} 1`,
		`gpulens_container_gpu_utilization_ratio{container="main",gpu="0",gpu_instance="",method="device",mig_profile="",model="NVIDIA H100 80GB HBM3",namespace="team-a",node="node-a",pod="trainer",sharing="none",uuid="GPU-00000000-0000-0000-0000-000000000000"} 0.97`,
		`gpulens_container_gpu_allocation_ratio{container="main",gpu="1",gpu_instance="1",mig_profile="3g.40gb",model="NVIDIA H100 80GB HBM3",namespace="team-b",node="node-a",pod="server",sharing="mig",uuid="GPU-11111111-1111-1111-1111-111111111111"} 0.42857142857142855`,
		`gpulens_container_gpu_utilization_ratio{container="main",gpu="1",gpu_instance="1",method="mig-gpm",mig_profile="3g.40gb",model="NVIDIA H100 80GB HBM3",namespace="team-b",node="node-a",pod="server",sharing="mig",uuid="GPU-11111111-1111-1111-1111-111111111111"} 0.7`,
		// The claimed A100 and MIG instance have the container series of
		// a device plugin's, and one claim_info each with the same join labels.
		`gpulens_container_gpu_allocation_ratio{container="main",gpu="2",gpu_instance="",mig_profile="",model="NVIDIA A100-SXM4-80GB",namespace="team-c",node="node-a",pod="chat",sharing="none",uuid="GPU-22222222-2222-2222-2222-222222222222"} 1`,
		`gpulens_container_gpu_claim_info{claim="chat-gpu-7xk2p",claim_namespace="team-c",container="main",device="gpu-2",driver="gpu.nvidia.com",gpu="2",gpu_instance="",namespace="team-c",node="node-a",pod="chat",pool="node-a",uuid="GPU-22222222-2222-2222-2222-222222222222"} 1`,
		`gpulens_container_gpu_allocation_ratio{container="main",gpu="1",gpu_instance="9",mig_profile="1g.10gb",model="NVIDIA H100 80GB HBM3",namespace="team-c",node="node-a",pod="chat",sharing="mig",uuid="GPU-11111111-1111-1111-1111-111111111111"} 0.14285714285714285`,
		`gpulens_container_gpu_claim_info{claim="chat-mig",claim_namespace="team-c",container="main",device="gpu-1-mig-1g10gb-19-6",driver="gpu.nvidia.com",gpu="1",gpu_instance="9",namespace="team-c",node="node-a",pod="chat",pool="node-a",uuid="GPU-11111111-1111-1111-1111-111111111111"} 1`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s", want)
		}
	}
	// Device-plugin holds have no claim series.
	if n := strings.Count(out, "gpulens_container_gpu_claim_info{"); n != 2 {
		t.Errorf("%d claim_info series, want 2 (one per claimed device)", n)
	}
	st := s.State().Attribution
	if !st.KubeletUp || len(st.Containers) != 4 {
		t.Errorf("attribution state %+v", st)
	}
}

// TestKubeletDownDropsContainerSeries: with no pod-resources answer the
// device series carry on and no container is attributed to stale pods.
func TestKubeletDownDropsContainerSeries(t *testing.T) {
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}, Node: "node-a",
		Attribution: &Attribution{Allocations: func() *podresources.Allocations { return nil }}})
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := string(exposition(t, s))
	if strings.Contains(out, "gpulens_container_gpu_allocation_ratio{") {
		t.Error("container series without a kubelet answer")
	}
	if !strings.Contains(out, "gpulens_exporter_podresources_up 0") || !strings.Contains(out, `gpulens_gpu_up{gpu="0"`) {
		t.Errorf("want podresources_up 0 and device series:\n%s", out)
	}
}
