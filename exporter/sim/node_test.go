package sim

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulens/gpulens/vocab"
)

func mustParse(t testing.TB, src string) *Scenario {
	t.Helper()
	sc, err := Parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func newSim(t testing.TB, sc *Scenario, node string) *NodeSim {
	t.Helper()
	s, err := NewNode(sc, node, fixedStart)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func handle(t testing.TB, lib nvml.Interface, i int) nvml.Device {
	t.Helper()
	d, r := lib.DeviceGetHandleByIndex(i)
	if r != nvml.SUCCESS {
		t.Fatalf("DeviceGetHandleByIndex(%d) = %v", i, r)
	}
	return d
}

func ok(t testing.TB, call string, r nvml.Return) {
	t.Helper()
	if r != nvml.SUCCESS {
		t.Fatalf("%s = %v, want SUCCESS", call, r)
	}
}

// systemScenario gives a node of the system: GPU 0 whole (training),
// GPU 1 time-sliced x2 (two inference pods), GPU 2 MIG when the model has
// it (one pod on instance 0), GPU 3 idle.
func systemScenario(system string) string {
	s := fmt.Sprintf(`seed: 5
nodes:
  - name: n
    system: %s
    gpus: 4
    sharing:
      - {gpus: [1], mode: time-slicing, replicas: 2}
`, system)
	sys := systems[system]
	if sys.migCapable() {
		s += fmt.Sprintf("      - {gpus: [2], mode: mig, mig: [%s, %s]}\n", sys.migProfiles[3].name, sys.migProfiles[0].name)
	}
	s += `    pods:
      - {namespace: ns, name: train, gpu: 0, load: training, memory: 4GiB, processes: 2}
      - {namespace: ns, name: inf-a, gpu: 1, load: inference, utilization: 0.9, memory: 2GiB}
      - {namespace: ns, name: inf-b, gpu: 1, load: inference, utilization: 0.9, memory: 3GiB}
`
	if sys.migCapable() {
		s += "      - {namespace: ns, name: mig-pod, gpu: 2, instance: 0, load: training, memory: 3GiB}\n"
	}
	return s
}

var (
	gpuUUID = regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	migUUID = regexp.MustCompile(`^MIG-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	busID   = regexp.MustCompile(`^00000000:[0-9A-F]{2}:00\.0$`)
)

func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

func TestEveryCallOnEverySystem(t *testing.T) {
	for _, system := range []string{"dgxa100", "dgxa100-80gb", "dgxh100", "dgxh200", "dgxb200", "l4"} {
		t.Run(system, func(t *testing.T) {
			sys := systems[system]
			s := newSim(t, mustParse(t, systemScenario(system)), "n")
			s.Advance(fixedStart.Add(14 * time.Hour))
			lib := s.Interface()
			ok(t, "Init", lib.Init())
			defer func() { ok(t, "Shutdown", lib.Shutdown()) }()
			if v, r := lib.SystemGetDriverVersion(); r != nvml.SUCCESS || v == "" {
				t.Errorf("SystemGetDriverVersion = %q, %v", v, r)
			}
			if v, r := lib.SystemGetCudaDriverVersion(); r != nvml.SUCCESS || v < 12000 {
				t.Errorf("SystemGetCudaDriverVersion = %d, %v", v, r)
			}
			if v, r := lib.SystemGetNVMLVersion(); r != nvml.SUCCESS || !strings.HasPrefix(v, "12.") {
				t.Errorf("SystemGetNVMLVersion = %q, %v", v, r)
			}
			if n, r := lib.DeviceGetCount(); r != nvml.SUCCESS || n != 4 {
				t.Fatalf("DeviceGetCount = %d, %v", n, r)
			}
			if lib.ErrorString(nvml.ERROR_GPU_IS_LOST) == "" {
				t.Error("ErrorString empty")
			}
			for i := range 4 {
				d := handle(t, lib, i)
				uuid, r := d.GetUUID()
				ok(t, "GetUUID", r)
				if !gpuUUID.MatchString(uuid) {
					t.Errorf("GPU %d UUID %q", i, uuid)
				}
				if byUUID, r := lib.DeviceGetHandleByUUID(uuid); r != nvml.SUCCESS || byUUID != d {
					t.Errorf("DeviceGetHandleByUUID(%s) = %v, %v", uuid, byUUID, r)
				}
				if idx, r := d.GetIndex(); r != nvml.SUCCESS || idx != i {
					t.Errorf("GetIndex = %d, %v", idx, r)
				}
				if name, r := d.GetName(); r != nvml.SUCCESS || name != sys.config.Name || strings.Contains(name, "Mock") {
					t.Errorf("GetName = %q, %v", name, r)
				}
				pci, r := d.GetPciInfo()
				ok(t, "GetPciInfo", r)
				if b := cString(pci.BusId[:]); !busID.MatchString(b) || pci.PciDeviceId != sys.config.PciDeviceId {
					t.Errorf("PCI bus id %q device id %#x", b, pci.PciDeviceId)
				}
				mem, r := d.GetMemoryInfo()
				ok(t, "GetMemoryInfo", r)
				mem2, r := d.GetMemoryInfo_v2()
				ok(t, "GetMemoryInfo_v2", r)
				if mem.Total != sys.totalBytes() || mem.Used+mem.Free != mem.Total || mem2.Reserved == 0 ||
					mem2.Used+mem2.Reserved+mem2.Free != mem2.Total || mem.Used != mem2.Used+mem2.Reserved {
					t.Errorf("memory v1 %+v v2 %+v", mem, mem2)
				}
				p, r := d.GetPowerUsage()
				ok(t, "GetPowerUsage", r)
				if w := float64(p) / 1000; w < sys.idleWatts || w > sys.tdpWatts {
					t.Errorf("power %.1f W outside [%v, %v]", w, sys.idleWatts, sys.tdpWatts)
				}
				e, r := d.GetTotalEnergyConsumption()
				ok(t, "GetTotalEnergyConsumption", r)
				if e == 0 {
					t.Error("energy 0")
				}
				if c, r := d.GetTemperature(nvml.TEMPERATURE_GPU); r != nvml.SUCCESS || c < 20 || c > 90 {
					t.Errorf("temperature %d, %v", c, r)
				}
				if c, r := d.GetClockInfo(nvml.CLOCK_SM); r != nvml.SUCCESS || c < sys.idleSMClockMHz || c > sys.maxSMClockMHz {
					t.Errorf("SM clock %d, %v", c, r)
				}
				if c, r := d.GetClockInfo(nvml.CLOCK_MEM); r != nvml.SUCCESS || c != sys.memClockMHz {
					t.Errorf("memory clock %d, %v", c, r)
				}
				_, r = d.GetCurrentClocksEventReasons()
				ok(t, "GetCurrentClocksEventReasons", r)
				_, r = d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC)
				ok(t, "GetTotalEccErrors", r)
				if unc, r := d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.AGGREGATE_ECC); r != nvml.SUCCESS || unc != 0 {
					t.Errorf("uncorrected ECC %d, %v", unc, r)
				}
				_, _, _, _, r = d.GetRemappedRows()
				ok(t, "GetRemappedRows", r)
				procs, r := d.GetComputeRunningProcesses()
				ok(t, "GetComputeRunningProcesses", r)
				var sum uint64
				for _, p := range procs {
					sum += p.UsedGpuMemory
				}
				if sum > mem2.Used {
					t.Errorf("GPU %d processes use %d > device used %d", i, sum, mem2.Used)
				}
				if isMIG, r := d.IsMigDeviceHandle(); r != nvml.SUCCESS || isMIG {
					t.Errorf("IsMigDeviceHandle = %v, %v", isMIG, r)
				}
				support, r := d.GpmQueryDeviceSupport()
				if sys.gpm {
					if r != nvml.SUCCESS || support.IsSupportedDevice != 1 {
						t.Errorf("GpmQueryDeviceSupport = %+v, %v on %s", support, r, system)
					}
				} else if r != nvml.ERROR_NOT_SUPPORTED || support.IsSupportedDevice != 0 {
					t.Errorf("GpmQueryDeviceSupport = %+v, %v on %s, want NOT_SUPPORTED", support, r, system)
				}
				set, r := lib.EventSetCreate()
				ok(t, "EventSetCreate", r)
				ok(t, "RegisterEvents", d.RegisterEvents(nvml.EventTypeXidCriticalError, set))
				if _, r := set.Wait(0); r != nvml.ERROR_TIMEOUT {
					t.Errorf("Wait on an empty set = %v, want ERROR_TIMEOUT", r)
				}
				ok(t, "EventSet.Free", set.Free())

				migMode, _, r := d.GetMigMode()
				switch {
				case !sys.migCapable():
					if r != nvml.ERROR_NOT_SUPPORTED {
						t.Errorf("GetMigMode on %s = %v, want NOT_SUPPORTED", system, r)
					}
				case i == 2:
					if r != nvml.SUCCESS || migMode != nvml.DEVICE_MIG_ENABLE {
						t.Errorf("GetMigMode = %d, %v, want enabled", migMode, r)
					}
					checkMIG(t, lib, d, sys)
				default:
					if r != nvml.SUCCESS || migMode != nvml.DEVICE_MIG_DISABLE {
						t.Errorf("GetMigMode = %d, %v, want disabled", migMode, r)
					}
				}
				if migMode != nvml.DEVICE_MIG_ENABLE {
					u, r := d.GetUtilizationRates()
					ok(t, "GetUtilizationRates", r)
					if u.Gpu > 100 || u.Memory > 100 {
						t.Errorf("utilization %+v", u)
					}
				}
			}
			checkWorkloads(t, lib)
		})
	}
}

func checkMIG(t *testing.T, lib nvml.Interface, parent nvml.Device, sys *system) {
	t.Helper()
	if _, r := parent.GetUtilizationRates(); r != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("GetUtilizationRates on a MIG parent = %v, want NOT_SUPPORTED", r)
	}
	if n, r := parent.GetMaxMigDeviceCount(); r != nvml.SUCCESS || n != 7 {
		t.Errorf("GetMaxMigDeviceCount = %d, %v", n, r)
	}
	if _, r := parent.GetMigDeviceHandleByIndex(2); r != nvml.ERROR_NOT_FOUND {
		t.Errorf("GetMigDeviceHandleByIndex past the geometry = %v, want NOT_FOUND", r)
	}
	parentProcs, _ := parent.GetComputeRunningProcesses()
	parentMem, _ := parent.GetMemoryInfo_v2()
	var instUsed uint64
	for k, p := range []migProfile{sys.migProfiles[3], sys.migProfiles[0]} {
		m, r := parent.GetMigDeviceHandleByIndex(k)
		ok(t, "GetMigDeviceHandleByIndex", r)
		if isMIG, r := m.IsMigDeviceHandle(); r != nvml.SUCCESS || !isMIG {
			t.Errorf("IsMigDeviceHandle = %v, %v", isMIG, r)
		}
		uuid, r := m.GetUUID()
		ok(t, "MIG GetUUID", r)
		if !migUUID.MatchString(uuid) {
			t.Errorf("MIG UUID %q", uuid)
		}
		if byUUID, r := lib.DeviceGetHandleByUUID(uuid); r != nvml.SUCCESS || byUUID != m {
			t.Errorf("DeviceGetHandleByUUID(MIG) = %v", r)
		}
		if name, r := m.GetName(); r != nvml.SUCCESS || name != sys.config.Name+" MIG "+p.name {
			t.Errorf("MIG name %q, %v", name, r)
		}
		gi, r := m.GetGpuInstanceId()
		ok(t, "GetGpuInstanceId", r)
		if ci, r := m.GetComputeInstanceId(); r != nvml.SUCCESS || ci != 0 {
			t.Errorf("GetComputeInstanceId = %d, %v", ci, r)
		}
		attr, r := m.GetAttributes()
		ok(t, "GetAttributes", r)
		if attr.GpuInstanceSliceCount != uint32(p.slices) || attr.ComputeInstanceSliceCount != uint32(p.slices) ||
			attr.MemorySizeMB<<20 != sys.instanceBytes(p) || attr.MultiprocessorCount == 0 {
			t.Errorf("attributes %+v for %s", attr, p.name)
		}
		mem, r := m.GetMemoryInfo()
		ok(t, "MIG GetMemoryInfo", r)
		instUsed += mem.Used
		procs, r := m.GetComputeRunningProcesses()
		ok(t, "MIG GetComputeRunningProcesses", r)
		var sum uint64
		for _, pr := range procs {
			if int(pr.GpuInstanceId) != gi || pr.ComputeInstanceId != 0 {
				t.Errorf("process on instance %d reports GI %d CI %d", gi, pr.GpuInstanceId, pr.ComputeInstanceId)
			}
			sum += pr.UsedGpuMemory
		}
		if sum > mem.Used || mem.Used > mem.Total {
			t.Errorf("instance %d: processes %d, used %d, total %d", k, sum, mem.Used, mem.Total)
		}
		if k == 0 && len(procs) != 1 {
			t.Errorf("instance 0 has %d processes, want 1", len(procs))
		}
		if up, r := m.GetDeviceHandleFromMigDeviceHandle(); r != nvml.SUCCESS || up != parent {
			t.Errorf("GetDeviceHandleFromMigDeviceHandle = %v, %v", up, r)
		}
		if sys.gpm {
			checkGPM(t, lib, parent, gi)
		}
	}
	if instUsed != parentMem.Used || len(parentProcs) != 1 {
		t.Errorf("MIG parent used %d (instances %d), %d processes", parentMem.Used, instUsed, len(parentProcs))
	}
}

// checkGPM samples MIG instance gi twice at the same simulated time (a
// zero-length interval, which reports the instantaneous values) through
// both the library and the device form, and reads the metrics.
func checkGPM(t *testing.T, lib nvml.Interface, d nvml.Device, gi int) {
	t.Helper()
	s1, r := lib.GpmSampleAlloc()
	ok(t, "GpmSampleAlloc", r)
	s2, _ := lib.GpmSampleAlloc()
	defer s1.Free()
	defer s2.Free()
	ok(t, "GpmMigSampleGet", lib.GpmMigSampleGet(d, gi, s1))
	ok(t, "GpmMigSampleGet", d.GpmMigSampleGet(gi, s2))
	m := nvml.GpmMetricsGetType{NumMetrics: 5, Sample1: s1, Sample2: s2}
	for i, id := range []nvml.GpmMetricId{nvml.GPM_METRIC_SM_UTIL, nvml.GPM_METRIC_SM_OCCUPANCY, nvml.GPM_METRIC_ANY_TENSOR_UTIL, nvml.GPM_METRIC_DRAM_BW_UTIL, nvml.GPM_METRIC_FP64_UTIL} {
		m.Metrics[i].MetricId = uint32(id)
	}
	ok(t, "GpmMetricsGet", lib.GpmMetricsGet(&m))
	for i := range 4 {
		if v := m.Metrics[i].Value; m.Metrics[i].NvmlReturn != uint32(nvml.SUCCESS) || v < 0 || v > 100 {
			t.Errorf("GPM metric %d = %v (ret %d)", m.Metrics[i].MetricId, v, m.Metrics[i].NvmlReturn)
		}
	}
	if m.Metrics[4].NvmlReturn != uint32(nvml.ERROR_NOT_SUPPORTED) {
		t.Errorf("unsimulated GPM metric returned %d", m.Metrics[4].NvmlReturn)
	}
}

// checkWorkloads checks the time-sliced GPU 1 and per-process utilization.
func checkWorkloads(t *testing.T, lib nvml.Interface) {
	t.Helper()
	d := handle(t, lib, 1)
	procs, _ := d.GetComputeRunningProcesses()
	if len(procs) != 2 {
		t.Fatalf("time-sliced GPU has %d processes, want 2", len(procs))
	}
	for _, p := range procs {
		if p.GpuInstanceId != noInstance || p.ComputeInstanceId != noInstance {
			t.Errorf("non-MIG process has GI %d CI %d", p.GpuInstanceId, p.ComputeInstanceId)
		}
	}
	u, _ := d.GetUtilizationRates()
	samples, r := d.GetProcessUtilization(0)
	ok(t, "GetProcessUtilization", r)
	var sm uint32
	for _, s := range samples {
		sm += s.SmUtil
	}
	// Two tenants at 0.9 peak at 14:00 oversubscribe: the device is
	// capped and the processes' shares add up to it.
	if u.Gpu != 100 || sm < 98 || sm > 102 {
		t.Errorf("time-sliced GPU at %d%%, processes sum to %d%%", u.Gpu, sm)
	}
	if _, r := d.GetProcessUtilization(samples[0].TimeStamp); r != nvml.ERROR_NOT_FOUND {
		t.Errorf("GetProcessUtilization(last seen) = %v, want NOT_FOUND", r)
	}
	whole := handle(t, lib, 0)
	procs, _ = whole.GetComputeRunningProcesses()
	if len(procs) != 2 || procs[0].Pid == procs[1].Pid {
		t.Errorf("pod with processes: 2 runs %v", procs)
	}
	idle := handle(t, lib, 3)
	if reasons, _ := idle.GetCurrentClocksEventReasons(); reasons&nvml.ClocksEventReasonGpuIdle == 0 {
		t.Errorf("idle GPU throttle reasons %#x lack gpu_idle", reasons)
	}
}

func TestGPMAveragesOverTheInterval(t *testing.T) {
	s := newSim(t, mustParse(t, systemScenario("dgxh100")), "n")
	lib := s.Interface()
	d := handle(t, lib, 0)
	s1, _ := lib.GpmSampleAlloc()
	s2, _ := lib.GpmSampleAlloc()
	s.Advance(fixedStart.Add(time.Hour))
	ok(t, "GpmSampleGet", lib.GpmSampleGet(d, s1))
	// Average over an hour sampled at 1s must match the same hour sampled
	// once a minute: both integrate the same curve.
	for off := time.Second; off <= time.Hour; off += time.Second {
		s.Advance(fixedStart.Add(time.Hour + off))
	}
	ok(t, "GpmSampleGet", d.GpmSampleGet(s2))
	fine := gpmValue(t, lib, s1, s2, nvml.GPM_METRIC_SM_UTIL)

	s2b := newSim(t, mustParse(t, systemScenario("dgxh100")), "n")
	lib2 := s2b.Interface()
	d2 := handle(t, lib2, 0)
	a, _ := lib2.GpmSampleAlloc()
	b, _ := lib2.GpmSampleAlloc()
	s2b.Advance(fixedStart.Add(time.Hour))
	ok(t, "GpmSampleGet", a.Get(d2))
	for off := time.Minute; off <= time.Hour; off += time.Minute {
		s2b.Advance(fixedStart.Add(time.Hour + off))
	}
	ok(t, "GpmSampleGet", b.Get(d2))
	coarse := gpmValue(t, lib2, a, b, nvml.GPM_METRIC_SM_UTIL)
	if fine < 60 || fine > 100 || coarse < fine-2 || coarse > fine+2 {
		t.Errorf("GPM SM average: %.2f%% at 1s steps, %.2f%% at 1min steps", fine, coarse)
	}
	// Samples from different devices do not combine.
	other, _ := lib.GpmSampleAlloc()
	ok(t, "GpmSampleGet", other.Get(handle(t, lib, 1)))
	m := nvml.GpmMetricsGetType{NumMetrics: 1, Sample1: s1, Sample2: other}
	if r := lib.GpmMetricsGet(&m); r != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("GpmMetricsGet across devices = %v", r)
	}
}

func gpmValue(t *testing.T, lib nvml.Interface, a, b nvml.GpmSample, id nvml.GpmMetricId) float64 {
	t.Helper()
	m := nvml.GpmMetricsGetType{NumMetrics: 1, Sample1: a, Sample2: b}
	m.Metrics[0].MetricId = uint32(id)
	ok(t, "GpmMetricsGet", lib.GpmMetricsGet(&m))
	return m.Metrics[0].Value
}

func TestGPMUnsupportedOnAmpereAndAda(t *testing.T) {
	for _, system := range []string{"dgxa100", "dgxa100-80gb", "l4"} {
		s := newSim(t, mustParse(t, systemScenario(system)), "n")
		lib := s.Interface()
		sample, _ := lib.GpmSampleAlloc()
		if r := lib.GpmSampleGet(handle(t, lib, 0), sample); r != nvml.ERROR_NOT_SUPPORTED {
			t.Errorf("%s: GpmSampleGet = %v, want NOT_SUPPORTED", system, r)
		}
		if _, r := lib.GpmQueryDeviceSupport(handle(t, lib, 0)); r != nvml.ERROR_NOT_SUPPORTED {
			t.Errorf("%s: GpmQueryDeviceSupport = %v, want NOT_SUPPORTED", system, r)
		}
	}
}

func TestDeterminism(t *testing.T) {
	src := systemScenario("dgxh100")
	read := func(seed uint64) []string {
		sc := mustParse(t, src)
		sc.Seed = seed
		s := newSim(t, sc, "n")
		var out []string
		for step := range 30 {
			s.Advance(fixedStart.Add(time.Duration(step) * 17 * time.Minute))
			lib := s.Interface()
			for i := range 4 {
				d := handle(t, lib, i)
				uuid, _ := d.GetUUID()
				pci, _ := d.GetPciInfo()
				p, _ := d.GetPowerUsage()
				e, _ := d.GetTotalEnergyConsumption()
				m, _ := d.GetMemoryInfo_v2()
				procs, _ := d.GetComputeRunningProcesses()
				out = append(out, fmt.Sprint(uuid, cString(pci.BusId[:]), p, e, m.Used, procs))
			}
			for _, p := range s.Pods() {
				out = append(out, fmt.Sprint(p.UID, p.ContainerID, p.PIDs, p.DeviceID))
			}
		}
		return out
	}
	a, b, c := read(1), read(1), read(2)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Error("two simulators with the same seed and times differ")
	}
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d of %d readings identical across seeds 1 and 2", same, len(a))
	}
}

func TestEnergyIsTheIntegralOfPower(t *testing.T) {
	s := newSim(t, mustParse(t, systemScenario("dgxh100")), "n")
	d := handle(t, s.Interface(), 3) // idle: constant power
	e0, _ := d.GetTotalEnergyConsumption()
	p, _ := d.GetPowerUsage()
	s.Advance(fixedStart.Add(time.Hour))
	e1, _ := d.GetTotalEnergyConsumption()
	if got, want := float64(e1-e0), float64(p)*3600; got < want*0.999 || got > want*1.001 {
		t.Errorf("idle GPU used %.0f mJ in an hour at %d mW, want %.0f", got, p, want)
	}
	s.Advance(fixedStart.Add(30 * time.Minute)) // backwards: ignored
	if e2, _ := d.GetTotalEnergyConsumption(); e2 != e1 || !s.Now().Equal(fixedStart.Add(time.Hour)) {
		t.Errorf("Advance backwards changed state: energy %d→%d, now %v", e1, e2, s.Now())
	}
}

func TestPodsLifecycleAndIdentity(t *testing.T) {
	sc := mustParse(t, base+
		"      - {namespace: ns, name: job, gpu: 1, load: batch, memory: 1GiB, start: 1h, end: 2h}\n"+
		"      - {namespace: ns, name: ts-a, gpu: 6, load: inference, memory: 1GiB}\n"+
		"      - {namespace: ns, name: ts-b, gpu: 6, load: inference, memory: 1GiB}\n"+
		"      - {namespace: ns, name: slice, gpu: 4, instance: 1, load: inference, memory: 1GiB}\n")
	s := newSim(t, sc, "n1")
	names := func() string {
		var n []string
		for _, p := range s.Pods() {
			n = append(n, p.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(); got != "p0,ts-a,ts-b,slice" {
		t.Errorf("pods at start = %s", got)
	}
	s.Advance(fixedStart.Add(90 * time.Minute))
	if got := names(); got != "p0,job,ts-a,ts-b,slice" {
		t.Errorf("pods at 1h30 = %s", got)
	}
	byName := map[string]PodState{}
	for _, p := range s.Pods() {
		byName[p.Name] = p
	}
	devs := s.Devices()
	if job := byName["job"]; !job.StartedAt.Equal(fixedStart.Add(time.Hour)) || job.Sharing != ModeNone ||
		job.DeviceID != devs[1].UUID || job.ResourceName != vocab.ResourceGPU || job.Replica != -1 || job.GPUInstanceID != -1 {
		t.Errorf("job = %+v", job)
	}
	a, b := byName["ts-a"], byName["ts-b"]
	if a.Replica != 0 || b.Replica != 1 || a.DeviceID != devs[6].UUID+"::0" || b.DeviceID != devs[6].UUID+"::1" || a.Replicas != 2 {
		t.Errorf("time-sliced pods: %+v / %+v", a, b)
	}
	sl := byName["slice"]
	if sl.MIGProfile != "2g.20gb" || sl.MIGUUID != devs[4].Instances[1].UUID || sl.DeviceID != sl.MIGUUID ||
		sl.ResourceName != "nvidia.com/mig-2g.20gb" || sl.GPUInstanceID != devs[4].Instances[1].GPUInstanceID {
		t.Errorf("MIG pod = %+v", sl)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(a.ContainerID) || !regexp.MustCompile(`^[0-9a-f-]{36}$`).MatchString(a.UID) {
		t.Errorf("identity: uid %q container %q", a.UID, a.ContainerID)
	}
	pids := map[uint32]bool{}
	for _, p := range s.Pods() {
		for _, pid := range p.PIDs {
			if pids[pid] || pid < pidMin {
				t.Errorf("PID %d duplicated or too low", pid)
			}
			pids[pid] = true
		}
	}
	s.Advance(fixedStart.Add(3 * time.Hour))
	if got := names(); got != "p0,ts-a,ts-b,slice" {
		t.Errorf("pods at 3h = %s", got)
	}
	if len(devs[6].DeviceIDs) != 2 || len(devs[4].DeviceIDs) != 0 || len(devs[4].Instances) != 4 || devs[0].DeviceIDs[0] != devs[0].UUID {
		t.Errorf("devices = %+v", devs)
	}
}

func TestUnknownNode(t *testing.T) {
	if _, err := NewNode(Default(), "nope", fixedStart); err == nil || !strings.Contains(err.Error(), `no node "nope"`) {
		t.Errorf("NewNode(unknown) = %v", err)
	}
}

func TestUnsimulatedCallsAnswerNotSupported(t *testing.T) {
	s := newSim(t, mustParse(t, systemScenario("dgxh100")), "n")
	lib := s.Interface()
	d := handle(t, lib, 0)
	if _, r := d.GetFanSpeed(); r != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("GetFanSpeed = %v, want NOT_SUPPORTED", r)
	}
	if arch, r := d.GetArchitecture(); r != nvml.SUCCESS || arch != nvml.DEVICE_ARCH_HOPPER {
		t.Errorf("GetArchitecture (from go-nvml's mock) = %v, %v", arch, r)
	}
	// The library form of a device call forwards to the device.
	uuid, r := lib.DeviceGetUUID(d)
	if want, _ := d.GetUUID(); r != nvml.SUCCESS || uuid != want {
		t.Errorf("DeviceGetUUID = %q, %v", uuid, r)
	}
	if _, r := lib.DeviceGetUUID(nil); r != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("DeviceGetUUID(nil) = %v", r)
	}
	if _, r := lib.DeviceGetBAR1MemoryInfo(d); r != nvml.ERROR_NOT_SUPPORTED {
		t.Errorf("DeviceGetBAR1MemoryInfo = %v", r)
	}
	if r := lib.Shutdown(); r != nvml.ERROR_UNINITIALIZED {
		t.Errorf("Shutdown without Init = %v", r)
	}
}
