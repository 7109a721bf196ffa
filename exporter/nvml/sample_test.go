package nvml

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/gpulens/gpulens/exporter/gpu"
)

func TestSampleHealthy(t *testing.T) {
	r := newRig(t, dgxh100.New())
	b := r.open(t, time.Second)
	if b.Name() != "nvml" {
		t.Errorf("Name() = %q", b.Name())
	}
	before := time.Now()
	s := sample(t, b)

	if s.DriverVersion != "550.54.15" || s.CUDAVersion != "12.4" || s.NVMLVersion != "12.550.54.15" {
		t.Errorf("versions = %q %q %q", s.DriverVersion, s.CUDAVersion, s.NVMLVersion)
	}
	if s.Time.Before(before) {
		t.Errorf("Time %v is before the sample started", s.Time)
	}
	if len(s.Errors) != 0 {
		t.Errorf("Errors = %v, want none", s.Errors)
	}
	if len(s.Devices) != 8 {
		t.Fatalf("%d devices, want 8", len(s.Devices))
	}
	for i, d := range s.Devices {
		if !d.Up || d.Err != "" {
			t.Errorf("gpu %d: Up=%v Err=%q", i, d.Up, d.Err)
		}
		if d.Index != i || d.UUID != r.devs[i].UUID || d.Model != "NVIDIA H100 80GB HBM3" || d.PCIBusID != r.devs[i].PciBusID {
			t.Errorf("gpu %d: identity %d %q %q %q", i, d.Index, d.UUID, d.Model, d.PCIBusID)
		}
		if d.MIGMode || len(d.Instances) != 0 {
			t.Errorf("gpu %d: MIG %v with %d instances", i, d.MIGMode, len(d.Instances))
		}
		want := []gpu.Process{{PID: pidOf(i), GPUInstanceID: -1, ComputeInstanceID: -1,
			MemoryUsedBytes: rawProcMiB << 20, SMUtilization: 0.5}}
		if len(d.Processes) != 1 || d.Processes[0] != want[0] {
			t.Errorf("gpu %d: processes %+v, want %+v", i, d.Processes, want)
		}
		// GPM is off in the rig.
		for _, v := range []float64{d.SMActive, d.SMOccupancy, d.TensorActive, d.DRAMActive} {
			if !isNA(v) {
				t.Errorf("gpu %d: GPM value %v without GPM support", i, v)
			}
		}
	}
}

// TestUnitConversions checks each raw NVML value lands in the snapshot in
// base units.
func TestUnitConversions(t *testing.T) {
	r := newRig(t, dgxa100.New())
	d := sample(t, r.open(t, time.Second)).Devices[0]
	total := float64(r.devs[0].MemoryInfo.Total)

	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"utilization %→ratio", d.Utilization, 0.87},
		{"memory utilization %→ratio", d.MemoryUtilization, 0.40},
		{"power mW→W", d.PowerWatts, 250.5},
		{"energy mJ→J", d.EnergyJoules, 1234.567},
		{"temperature °C", d.TemperatureC, 65},
		{"SM clock MHz→Hz", d.SMClockHz, 1.98e9},
		{"memory clock MHz→Hz", d.MemClockHz, 2.619e9},
		{"memory used bytes", d.MemoryUsedBytes, rawUsedMiB << 20},
		{"memory reserved bytes", d.MemoryReservedBytes, rawResvMiB << 20},
		{"memory total bytes", d.MemoryTotalBytes, total},
		{"ECC corrected", d.ECCCorrected, rawECCCorr},
		{"ECC uncorrected", d.ECCUncorrected, rawECCUncorr},
		{"remapped rows correctable", d.RemappedRowsCorrectable, rawRemapCorr},
		{"remapped rows uncorrectable", d.RemappedRowsUncorrectable, 0},
		{"process memory bytes", d.Processes[0].MemoryUsedBytes, rawProcMiB << 20},
		{"process SM %→ratio", d.Processes[0].SMUtilization, 0.5},
	} {
		if diff := tc.got - tc.want; diff > 1e-9 || diff < -1e-9 || isNA(tc.got) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if !d.ThrottleValid || d.ThrottleReasons != rawReasons {
		t.Errorf("throttle = %#x valid=%v", d.ThrottleReasons, d.ThrottleValid)
	}
	if !d.RemappedRowsValid || !d.RemappedRowsPending || d.RemappedRowsFailure {
		t.Errorf("remapped rows flags valid=%v pending=%v failure=%v", d.RemappedRowsValid, d.RemappedRowsPending, d.RemappedRowsFailure)
	}
}

// failure injects ret into one NVML call of a device and names what must
// then be NA.
type failure struct {
	call  string
	set   func(d *server.Device, ret gonvml.Return)
	field func(d gpu.Device) float64
}

var failures = []failure{
	{"nvmlDeviceGetUtilizationRates",
		func(d *server.Device, ret gonvml.Return) {
			d.GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) { return gonvml.Utilization{}, ret }
		},
		func(d gpu.Device) float64 { return d.Utilization }},
	{"nvmlDeviceGetPowerUsage",
		func(d *server.Device, ret gonvml.Return) {
			d.GetPowerUsageFunc = func() (uint32, gonvml.Return) { return 0, ret }
		},
		func(d gpu.Device) float64 { return d.PowerWatts }},
	{"nvmlDeviceGetTotalEnergyConsumption",
		func(d *server.Device, ret gonvml.Return) {
			d.GetTotalEnergyConsumptionFunc = func() (uint64, gonvml.Return) { return 0, ret }
		},
		func(d gpu.Device) float64 { return d.EnergyJoules }},
	{"nvmlDeviceGetTemperature",
		func(d *server.Device, ret gonvml.Return) {
			d.GetTemperatureFunc = func(gonvml.TemperatureSensors) (uint32, gonvml.Return) { return 0, ret }
		},
		func(d gpu.Device) float64 { return d.TemperatureC }},
	{"nvmlDeviceGetTotalEccErrors",
		func(d *server.Device, ret gonvml.Return) {
			d.GetTotalEccErrorsFunc = func(gonvml.MemoryErrorType, gonvml.EccCounterType) (uint64, gonvml.Return) { return 0, ret }
		},
		func(d gpu.Device) float64 { return d.ECCCorrected }},
	{"nvmlDeviceGetRemappedRows",
		func(d *server.Device, ret gonvml.Return) {
			d.GetRemappedRowsFunc = func() (int, int, bool, bool, gonvml.Return) { return 0, 0, false, false, ret }
		},
		func(d gpu.Device) float64 { return d.RemappedRowsCorrectable }},
	{"nvmlDeviceGetProcessUtilization",
		func(d *server.Device, ret gonvml.Return) {
			d.GetProcessUtilizationFunc = func(uint64) ([]gonvml.ProcessUtilizationSample, gonvml.Return) { return nil, ret }
		},
		func(d gpu.Device) float64 { return d.Processes[0].SMUtilization }},
}

func TestNotSupportedIsNAWithoutError(t *testing.T) {
	for _, f := range failures {
		t.Run(f.call, func(t *testing.T) {
			r := newRig(t, dgxh100.New())
			f.set(r.devs[0], gonvml.ERROR_NOT_SUPPORTED)
			s := sample(t, r.open(t, time.Second))
			if len(s.Errors) != 0 {
				t.Errorf("Errors = %v, want none", s.Errors)
			}
			if d := s.Devices[0]; !d.Up || !isNA(f.field(d)) {
				t.Errorf("Up=%v value=%v, want up with NA", d.Up, f.field(d))
			}
			if v := f.field(s.Devices[1]); isNA(v) {
				t.Errorf("another GPU lost its value")
			}
		})
	}
}

func TestFailedCallIsCountedByName(t *testing.T) {
	for _, f := range failures {
		t.Run(f.call, func(t *testing.T) {
			r := newRig(t, dgxh100.New())
			f.set(r.devs[0], gonvml.ERROR_UNKNOWN)
			f.set(r.devs[5], gonvml.ERROR_NO_PERMISSION)
			b := r.open(t, time.Second)
			for range 2 {
				s := sample(t, b)
				if len(s.Errors) != 1 || s.Errors[f.call] < 2 {
					t.Errorf("Errors = %v, want only %s ≥ 2", s.Errors, f.call)
				}
				if d := s.Devices[0]; !d.Up || !isNA(f.field(d)) {
					t.Errorf("Up=%v value=%v, want up with NA", d.Up, f.field(d))
				}
			}
		})
	}
}

// TestPanickingCallIsCounted: go-nvml mocks panic on methods left unset; the
// reader turns that into a failed call instead of crashing.
func TestPanickingCallIsCounted(t *testing.T) {
	r := newRig(t, dgxh100.New())
	r.devs[2].GetPowerUsageFunc = nil
	s := sample(t, r.open(t, time.Second))
	if got := s.Errors["nvmlDeviceGetPowerUsage"]; got != 1 || len(s.Errors) != 1 {
		t.Errorf("Errors = %v, want nvmlDeviceGetPowerUsage: 1", s.Errors)
	}
	if d := s.Devices[2]; !d.Up || !isNA(d.PowerWatts) || isNA(d.TemperatureC) {
		t.Errorf("Up=%v power=%v temp=%v", d.Up, d.PowerWatts, d.TemperatureC)
	}
}

func TestFallbacks(t *testing.T) {
	t.Run("memory v1 when v2 is missing", func(t *testing.T) {
		r := newRig(t, dgxh100.New())
		r.devs[0].GetMemoryInfo_v2Func = func() (gonvml.Memory_v2, gonvml.Return) {
			return gonvml.Memory_v2{}, gonvml.ERROR_FUNCTION_NOT_FOUND
		}
		r.devs[0].MemoryInfo.Used = 3 << 30
		s := sample(t, r.open(t, time.Second))
		d := s.Devices[0]
		if d.MemoryUsedBytes != 3<<30 || d.MemoryTotalBytes != float64(r.devs[0].MemoryInfo.Total) || !isNA(d.MemoryReservedBytes) {
			t.Errorf("memory used=%v total=%v reserved=%v", d.MemoryUsedBytes, d.MemoryTotalBytes, d.MemoryReservedBytes)
		}
		if len(s.Errors) != 0 {
			t.Errorf("Errors = %v", s.Errors)
		}
	})
	t.Run("throttle reasons on old drivers", func(t *testing.T) {
		r := newRig(t, dgxh100.New())
		r.devs[0].GetCurrentClocksEventReasonsFunc = func() (uint64, gonvml.Return) { return 0, gonvml.ERROR_FUNCTION_NOT_FOUND }
		r.devs[0].GetCurrentClocksThrottleReasonsFunc = func() (uint64, gonvml.Return) { return 0x8, gonvml.SUCCESS }
		s := sample(t, r.open(t, time.Second))
		if d := s.Devices[0]; !d.ThrottleValid || d.ThrottleReasons != 0x8 {
			t.Errorf("throttle = %#x valid=%v", d.ThrottleReasons, d.ThrottleValid)
		}
	})
	t.Run("no throttle reasons at all", func(t *testing.T) {
		r := newRig(t, dgxh100.New())
		r.devs[0].GetCurrentClocksEventReasonsFunc = func() (uint64, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
		r.devs[0].GetCurrentClocksThrottleReasonsFunc = func() (uint64, gonvml.Return) { return 0, gonvml.ERROR_NOT_SUPPORTED }
		s := sample(t, r.open(t, time.Second))
		if d := s.Devices[0]; d.ThrottleValid {
			t.Errorf("throttle valid with both calls unsupported")
		}
	})
}

func TestProcessUtilization(t *testing.T) {
	r := newRig(t, dgxh100.New())
	d := r.devs[0]
	var asked []uint64
	d.GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{
			{Pid: 10, UsedGpuMemory: 1 << 30, GpuInstanceId: noInstanceID, ComputeInstanceId: noInstanceID},
			{Pid: 11, UsedGpuMemory: valueNotAvailable, GpuInstanceId: noInstanceID, ComputeInstanceId: noInstanceID},
		}, gonvml.SUCCESS
	}
	round := 0
	d.GetProcessUtilizationFunc = func(last uint64) ([]gonvml.ProcessUtilizationSample, gonvml.Return) {
		asked = append(asked, last)
		round++
		if round == 1 {
			// Out of order on purpose: the latest sample per PID wins.
			return []gonvml.ProcessUtilizationSample{
				{Pid: 10, TimeStamp: 300, SmUtil: 70},
				{Pid: 10, TimeStamp: 100, SmUtil: 10},
				{Pid: 99, TimeStamp: 200, SmUtil: 5}, // exited since
			}, gonvml.SUCCESS
		}
		return nil, gonvml.ERROR_NOT_FOUND // nothing new: not an error
	}
	b := r.open(t, time.Second)

	s := sample(t, b)
	ps := s.Devices[0].Processes
	if len(ps) != 2 || ps[0].SMUtilization != 0.7 || !isNA(ps[1].SMUtilization) {
		t.Fatalf("processes = %+v, want pid 10 at 0.7 and pid 11 NA", ps)
	}
	if !isNA(ps[1].MemoryUsedBytes) {
		t.Errorf("undisclosed memory = %v, want NA", ps[1].MemoryUsedBytes)
	}
	s = sample(t, b)
	if ps := s.Devices[0].Processes; !isNA(ps[0].SMUtilization) {
		t.Errorf("pid 10 SM = %v without new samples, want NA", ps[0].SMUtilization)
	}
	if len(s.Errors) != 0 {
		t.Errorf("Errors = %v", s.Errors)
	}
	if len(asked) != 2 || asked[0] != 0 || asked[1] != 300 {
		t.Errorf("lastSeen timestamps passed = %v, want [0 300]", asked)
	}
}

func TestLostGPU(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(d *server.Device)
		call string
	}{
		{"lost on identity", func(d *server.Device) {
			d.GetUUIDFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_GPU_IS_LOST }
		}, "nvmlDeviceGetUUID"},
		{"not found on identity", func(d *server.Device) {
			d.GetUUIDFunc = func() (string, gonvml.Return) { return "", gonvml.ERROR_GPU_NOT_FOUND }
		}, "nvmlDeviceGetUUID"},
		{"lost mid-read", func(d *server.Device) {
			d.GetPowerUsageFunc = func() (uint32, gonvml.Return) { return 0, gonvml.ERROR_GPU_IS_LOST }
		}, "nvmlDeviceGetPowerUsage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, dgxh100.New())
			b := r.open(t, time.Second)
			first := sample(t, b).Devices[2]

			uuid, power := r.devs[2].GetUUIDFunc, r.devs[2].GetPowerUsageFunc
			tc.lose(r.devs[2])
			s := sample(t, b)
			d := s.Devices[2]
			if d.Up || !strings.Contains(d.Err, tc.call) {
				t.Errorf("Up=%v Err=%q, want down naming %s", d.Up, d.Err, tc.call)
			}
			if d.UUID != first.UUID || d.Model != first.Model || d.PCIBusID != first.PCIBusID || d.Index != 2 {
				t.Errorf("identity not kept: %q %q %q %d", d.UUID, d.Model, d.PCIBusID, d.Index)
			}
			if !isNA(d.PowerWatts) || !isNA(d.Utilization) || len(d.Processes) != 0 {
				t.Errorf("a down GPU reports values: %+v", d)
			}
			// One failed call, not one per metric.
			if len(s.Errors) != 1 || s.Errors[tc.call] != 1 {
				t.Errorf("Errors = %v, want %s: 1", s.Errors, tc.call)
			}
			for i, o := range s.Devices {
				if i != 2 && !o.Up {
					t.Errorf("gpu %d down with gpu 2", i)
				}
			}

			r.devs[2].GetUUIDFunc, r.devs[2].GetPowerUsageFunc = uuid, power
			if d := sample(t, b).Devices[2]; !d.Up {
				t.Errorf("GPU did not come back: %q", d.Err)
			}
		})
	}
}

func TestHandleUnavailableAtStart(t *testing.T) {
	r := newRig(t, dgxh100.New())
	devices := r.srv.DeviceGetHandleByIndexFunc
	r.srv.DeviceGetHandleByIndexFunc = func(i int) (gonvml.Device, gonvml.Return) {
		if i == 1 {
			return nil, gonvml.ERROR_UNKNOWN
		}
		return devices(i)
	}
	b := r.open(t, time.Second)
	s := sample(t, b)
	if d := s.Devices[1]; d.Up || !strings.Contains(d.Err, "nvmlDeviceGetHandleByIndex") || d.Index != 1 {
		t.Errorf("gpu 1: Up=%v Err=%q Index=%d", d.Up, d.Err, d.Index)
	}
	if s.Errors["nvmlDeviceGetHandleByIndex"] != 2 { // at New, then again in Sample
		t.Errorf("Errors = %v", s.Errors)
	}
	r.srv.DeviceGetHandleByIndexFunc = devices
	if d := sample(t, b).Devices[1]; !d.Up || d.UUID != r.devs[1].UUID {
		t.Errorf("gpu 1 not recovered: Up=%v Err=%q", d.Up, d.Err)
	}
}

func TestHangingGPU(t *testing.T) {
	const timeout = 100 * time.Millisecond
	r := newRig(t, dgxh100.New())
	release := make(chan struct{})
	power := r.devs[3].GetPowerUsageFunc
	r.devs[3].GetPowerUsageFunc = func() (uint32, gonvml.Return) {
		<-release
		return power()
	}
	b := r.open(t, timeout)
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()

	base := runtime.NumGoroutine()
	for i := range 8 {
		start := time.Now()
		s := sample(t, b)
		if took := time.Since(start); took > timeout+500*time.Millisecond {
			t.Fatalf("sample %d took %v with a %v timeout", i, took, timeout)
		}
		d := s.Devices[3]
		if d.Up || !strings.HasPrefix(d.Err, "timeout after 100ms") {
			t.Errorf("sample %d: hung GPU Up=%v Err=%q", i, d.Up, d.Err)
		}
		if d.UUID != r.devs[3].UUID {
			t.Errorf("sample %d: hung GPU lost its identity: %q", i, d.UUID)
		}
		for j, o := range s.Devices {
			if j != 3 && !o.Up {
				t.Errorf("sample %d: gpu %d down: %q", i, j, o.Err)
			}
		}
		// The hung read is the one extra goroutine, whatever the count of
		// samples; finished readers may still be on their way out.
		if n := runtime.NumGoroutine(); n > base+3 {
			t.Fatalf("sample %d: %d goroutines, started with %d: reads pile up", i, n, base)
		}
	}

	close(release)
	released = true
	eventually(t, "the hung GPU to recover", func() bool {
		d := sample(t, b).Devices[3]
		return d.Up && !isNA(d.PowerWatts)
	})
}

func TestSampleHonoursContext(t *testing.T) {
	r := newRig(t, dgxh100.New())
	release := make(chan struct{})
	defer close(release)
	r.devs[0].GetUtilizationRatesFunc = func() (gonvml.Utilization, gonvml.Return) {
		<-release
		return gonvml.Utilization{}, gonvml.SUCCESS
	}
	b := r.open(t, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	s, err := b.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("Sample ignored its context")
	}
	if d := s.Devices[0]; d.Up || !strings.Contains(d.Err, "deadline") {
		t.Errorf("Up=%v Err=%q", d.Up, d.Err)
	}
}

func TestCloseStopsEverything(t *testing.T) {
	base := runtime.NumGoroutine()
	r := newRig(t, dgxh100.New())
	shutdowns := 0
	r.srv.ShutdownFunc = func() gonvml.Return { shutdowns++; return gonvml.SUCCESS }
	b, err := New(r.srv, Options{CallTimeout: time.Second, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	sample(t, b)
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if shutdowns != 1 {
		t.Errorf("Shutdown called %d times", shutdowns)
	}
	if _, err := b.Sample(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Sample after Close: %v", err)
	}
	eventually(t, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= base })
}

// TestSnapshotsDoNotShareBuffers: a snapshot must stay intact while the
// next one is taken, since the collector may still encode it.
func TestSnapshotsDoNotShareBuffers(t *testing.T) {
	r := newRig(t, dgxh100.New())
	b := r.open(t, time.Second)
	s1 := sample(t, b)
	p0 := s1.Devices[0].Processes[0]
	s1.Devices[0].Processes = append(s1.Devices[0].Processes, gpu.Process{PID: 1})
	if got := s1.Devices[1].Processes[0]; got.PID != pidOf(1) {
		t.Fatalf("appending to gpu 0's processes overwrote gpu 1's: %+v", got)
	}
	r.devs[0].GetComputeRunningProcessesFunc = func() ([]gonvml.ProcessInfo, gonvml.Return) {
		return []gonvml.ProcessInfo{{Pid: 4242, GpuInstanceId: noInstanceID, ComputeInstanceId: noInstanceID}}, gonvml.SUCCESS
	}
	sample(t, b)
	if s1.Devices[0].Processes[0] != p0 {
		t.Errorf("the next sample rewrote an earlier snapshot: %+v", s1.Devices[0].Processes[0])
	}
}

// TestBackToBackSamples: a read that has just finished must never be taken
// for a blocked one by the next Sample.
func TestBackToBackSamples(t *testing.T) {
	r := newRig(t, dgxh100.New())
	b := r.open(t, time.Second)
	for i := range 300 {
		for j, d := range sample(t, b).Devices {
			if !d.Up {
				t.Fatalf("sample %d: gpu %d down: %q", i, j, d.Err)
			}
		}
	}
}

// TestGPUHungFromStart: New must not hang on a GPU that never answers.
func TestGPUHungFromStart(t *testing.T) {
	const timeout = 100 * time.Millisecond
	r := newRig(t, dgxh100.New())
	release := make(chan struct{})
	uuid := r.devs[6].GetUUIDFunc
	r.devs[6].GetUUIDFunc = func() (string, gonvml.Return) {
		<-release
		return uuid()
	}
	start := time.Now()
	b := r.open(t, timeout)
	if took := time.Since(start); took > timeout+time.Second {
		t.Fatalf("New took %v", took)
	}
	s := sample(t, b)
	if d := s.Devices[6]; d.Up || !strings.HasPrefix(d.Err, "timeout after 100ms") || d.Index != 6 {
		t.Errorf("hung GPU: Up=%v Err=%q Index=%d", d.Up, d.Err, d.Index)
	}
	if !s.Devices[5].Up {
		t.Errorf("gpu 5 down: %q", s.Devices[5].Err)
	}
	close(release)
	eventually(t, "the GPU to answer", func() bool {
		d := sample(t, b).Devices[6]
		return d.Up && d.UUID == r.devs[6].UUID
	})
}
