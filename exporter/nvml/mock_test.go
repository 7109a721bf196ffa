package nvml

import (
	"context"
	"io"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// Raw values every healthy mock GPU reports (see healthy).
const (
	rawUtilGPU    = 87
	rawUtilMem    = 40
	rawPowerMW    = 250500
	rawEnergyMJ   = 1234567
	rawTempC      = 65
	rawSMClockMHz = 1980
	rawMemClkMHz  = 2619
	rawReasons    = 0x4 | 0x20
	rawECCCorr    = 3
	rawECCUncorr  = 1
	rawRemapCorr  = 2
	rawUsedMiB    = 10240
	rawResvMiB    = 512
	rawProcMiB    = 1024
	rawProcSMUtil = 50
)

// pidOf is the PID of the one process healthy puts on the GPU at pos.
func pidOf(pos int) uint32 { return uint32(1000 + pos) }

// rig is a go-nvml mock server with every call the backend makes answered
// by a healthy value, an event channel feeding the XID listener and GPM
// disabled. Tests override single Func fields of srv or devs to inject
// values and failures.
type rig struct {
	srv    *server.Server
	devs   []*server.Device
	events chan gonvml.EventData
}

func newRig(t testing.TB, srv *server.Server) *rig {
	t.Helper()
	r := &rig{srv: srv, events: make(chan gonvml.EventData, 16)}
	for i, d := range srv.Devices {
		sd := d.(*server.Device)
		healthy(sd, i)
		r.devs = append(r.devs, sd)
	}
	srv.EventSetCreateFunc = func() (gonvml.EventSet, gonvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(ms uint32) (gonvml.EventData, gonvml.Return) {
				// Shorter than asked: Close waits for the listener.
				select {
				case e := <-r.events:
					return e, gonvml.SUCCESS
				case <-time.After(min(time.Duration(ms)*time.Millisecond, 20*time.Millisecond)):
					return gonvml.EventData{}, gonvml.ERROR_TIMEOUT
				}
			},
			FreeFunc: func() gonvml.Return { return gonvml.SUCCESS },
		}, gonvml.SUCCESS
	}
	return r
}

// healthy answers every device call the backend makes with fixed values.
func healthy(d *server.Device, pos int) {
	total := d.MemoryInfo.Total
	var busID [32]int8
	for i, ch := range d.PciBusID {
		busID[i] = int8(ch)
	}
	d.GetPciInfoFunc = func() (gonvml.PciInfo, gonvml.Return) {
		return gonvml.PciInfo{BusId: busID, PciDeviceId: d.Config.PciDeviceId}, gonvml.SUCCESS
	}
	d.GetMemoryInfo_v2Func = func() (gonvml.Memory_v2, gonvml.Return) {
		used := uint64(rawUsedMiB) << 20
		resv := uint64(rawResvMiB) << 20
		return gonvml.Memory_v2{Total: total, Used: used, Reserved: resv, Free: total - used - resv}, gonvml.SUCCESS
	}
	d.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
		return gonvml.Utilization{Gpu: rawUtilGPU, Memory: rawUtilMem}, gonvml.SUCCESS
	}
	d.GetPowerUsageFunc = func() (uint32, gonvml.Return) { return rawPowerMW, gonvml.SUCCESS }
	d.GetTotalEnergyConsumptionFunc = func() (uint64, gonvml.Return) { return rawEnergyMJ, gonvml.SUCCESS }
	d.GetTemperatureFunc = func(s gonvml.TemperatureSensors) (uint32, gonvml.Return) {
		if s != gonvml.TEMPERATURE_GPU {
			return 0, gonvml.ERROR_INVALID_ARGUMENT
		}
		return rawTempC, gonvml.SUCCESS
	}
	d.GetClockInfoFunc = func(c gonvml.ClockType) (uint32, gonvml.Return) {
		switch c {
		case gonvml.CLOCK_SM:
			return rawSMClockMHz, gonvml.SUCCESS
		case gonvml.CLOCK_MEM:
			return rawMemClkMHz, gonvml.SUCCESS
		}
		return 0, gonvml.ERROR_INVALID_ARGUMENT
	}
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, gonvml.Return) { return rawReasons, gonvml.SUCCESS }
	d.GetCurrentClocksThrottleReasonsFunc = func() (uint64, gonvml.Return) { return rawReasons, gonvml.SUCCESS }
	d.GetTotalEccErrorsFunc = func(t gonvml.MemoryErrorType, c gonvml.EccCounterType) (uint64, gonvml.Return) {
		if c != gonvml.AGGREGATE_ECC {
			return 0, gonvml.ERROR_INVALID_ARGUMENT
		}
		if t == gonvml.MEMORY_ERROR_TYPE_CORRECTED {
			return rawECCCorr, gonvml.SUCCESS
		}
		return rawECCUncorr, gonvml.SUCCESS
	}
	d.GetRemappedRowsFunc = func() (int, int, bool, bool, gonvml.Return) {
		return rawRemapCorr, 0, true, false, gonvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{
			Pid:               pidOf(pos),
			UsedGpuMemory:     rawProcMiB << 20,
			GpuInstanceId:     noInstanceID,
			ComputeInstanceId: noInstanceID,
		}}, gonvml.SUCCESS
	}
	d.GetProcessUtilizationFunc = func(last uint64) ([]gonvml.ProcessUtilizationSample, gonvml.Return) {
		return []gonvml.ProcessUtilizationSample{{Pid: pidOf(pos), TimeStamp: last + 1, SmUtil: rawProcSMUtil}}, gonvml.SUCCESS
	}
	d.GetMaxMigDeviceCountFunc = func() (int, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
	d.GpmQueryDeviceSupportFunc = func() (gonvml.GpmSupport, gonvml.Return) {
		return gonvml.GpmSupport{IsSupportedDevice: 0}, gonvml.SUCCESS
	}
	d.RegisterEventsFunc = func(uint64, gonvml.EventSet) gonvml.Return { return gonvml.SUCCESS }
}

// open returns a backend over the rig, closed at the end of the test.
func (r *rig) open(t testing.TB, timeout time.Duration) *Backend {
	t.Helper()
	b, err := New(r.srv, Options{CallTimeout: timeout, Logger: quietLogger()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func sample(t testing.TB, b *Backend) *gpu.Snapshot {
	t.Helper()
	s, err := b.Sample(context.Background())
	if err != nil {
		t.Fatalf("Sample: %v", err)
	}
	return s
}

// eventually retries f until it returns true or two seconds have passed.
func eventually(t testing.TB, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func isNA(v float64) bool { return math.IsNaN(v) }

// migDevice is a mock MIG device handle.
type migSpec struct {
	uuid     string
	name     string // "" answers NOT_SUPPORTED
	gi, ci   int
	slices   uint32
	memMiB   uint64
	usedMiB  uint64
	procPIDs []uint32
}

func newMIGDevice(s migSpec) *mock.Device {
	return &mock.Device{
		GetUUIDFunc:              func() (string, gonvml.Return) { return s.uuid, gonvml.SUCCESS },
		GetGpuInstanceIdFunc:     func() (int, gonvml.Return) { return s.gi, gonvml.SUCCESS },
		GetComputeInstanceIdFunc: func() (int, gonvml.Return) { return s.ci, gonvml.SUCCESS },
		GetNameFunc: func() (string, gonvml.Return) {
			if s.name == "" {
				return "", gonvml.ERROR_NOT_SUPPORTED
			}
			return s.name, gonvml.SUCCESS
		},
		GetAttributesFunc: func() (gonvml.DeviceAttributes, gonvml.Return) {
			return gonvml.DeviceAttributes{
				GpuInstanceSliceCount:     s.slices,
				ComputeInstanceSliceCount: s.slices,
				MemorySizeMB:              s.memMiB,
			}, gonvml.SUCCESS
		},
		GetMemoryInfoFunc: func() (gonvml.Memory, gonvml.Return) {
			return gonvml.Memory{Total: s.memMiB << 20, Used: s.usedMiB << 20}, gonvml.SUCCESS
		},
		GetComputeRunningProcessesFunc: func() ([]gonvml.ProcessInfo, gonvml.Return) {
			var ps []gonvml.ProcessInfo
			for _, pid := range s.procPIDs {
				ps = append(ps, gonvml.ProcessInfo{Pid: pid, UsedGpuMemory: 256 << 20,
					GpuInstanceId: uint32(s.gi), ComputeInstanceId: uint32(s.ci)})
			}
			return ps, gonvml.SUCCESS
		},
	}
}

// fakeGPM is a GPM implementation on the mock server: each device (or GPU
// instance) has an activity counter that a sample snapshots and that grows
// by step per sample, and GpmMetricsGet reports the counter difference as a
// percentage, so a correct reader sees exactly step percent.
type fakeGPM struct {
	t    testing.TB
	step float64

	mu       sync.Mutex
	counters map[any]float64
	values   map[*mock.GpmSample]float64
	live     map[*mock.GpmSample]bool
	allocs   int
}

func enableGPM(t testing.TB, r *rig, step float64) *fakeGPM {
	f := &fakeGPM{t: t, step: step, counters: map[any]float64{},
		values: map[*mock.GpmSample]float64{}, live: map[*mock.GpmSample]bool{}}
	for _, d := range r.devs {
		d.GpmQueryDeviceSupportFunc = func() (gonvml.GpmSupport, gonvml.Return) {
			return gonvml.GpmSupport{IsSupportedDevice: 1}, gonvml.SUCCESS
		}
	}
	r.srv.GpmSampleAllocFunc = f.alloc
	r.srv.GpmSampleGetFunc = func(dev gonvml.Device, s gonvml.GpmSample) gonvml.Return {
		return f.take(dev, s)
	}
	r.srv.GpmMigSampleGetFunc = func(dev gonvml.Device, gi int, s gonvml.GpmSample) gonvml.Return {
		return f.take(struct {
			gonvml.Device
			int
		}{dev, gi}, s)
	}
	r.srv.GpmMetricsGetFunc = f.metrics
	return f
}

func (f *fakeGPM) alloc() (gonvml.GpmSample, gonvml.Return) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &mock.GpmSample{}
	s.FreeFunc = func() gonvml.Return {
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.live[s] {
			f.t.Errorf("GPM sample freed twice or never allocated")
		}
		delete(f.live, s)
		return gonvml.SUCCESS
	}
	f.live[s] = true
	f.allocs++
	return s, gonvml.SUCCESS
}

func (f *fakeGPM) take(key any, s gonvml.GpmSample) gonvml.Return {
	f.mu.Lock()
	defer f.mu.Unlock()
	ms := s.(*mock.GpmSample)
	if !f.live[ms] {
		f.t.Errorf("GPM sample used after free")
	}
	f.counters[key] += f.step
	f.values[ms] = f.counters[key]
	return gonvml.SUCCESS
}

// metrics reports SM util = diff, occupancy = diff/2, tensor = diff/4 and
// refuses DRAM bandwidth, to show per-metric failures stay per metric.
func (f *fakeGPM) metrics(q *gonvml.GpmMetricsGetType) gonvml.Return {
	f.mu.Lock()
	defer f.mu.Unlock()
	diff := f.values[q.Sample2.(*mock.GpmSample)] - f.values[q.Sample1.(*mock.GpmSample)]
	for i := range q.NumMetrics {
		m := &q.Metrics[i]
		switch gonvml.GpmMetricId(m.MetricId) {
		case gonvml.GPM_METRIC_SM_UTIL:
			m.Value = diff
		case gonvml.GPM_METRIC_SM_OCCUPANCY:
			m.Value = diff / 2
		case gonvml.GPM_METRIC_ANY_TENSOR_UTIL:
			m.Value = diff / 4
		default:
			m.NvmlReturn = uint32(gonvml.ERROR_NOT_SUPPORTED)
		}
	}
	return gonvml.SUCCESS
}

func (f *fakeGPM) liveSamples() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.live)
}
