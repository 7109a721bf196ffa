package sim

import (
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func faultScenario(faults string) *Scenario {
	sc, err := Parse([]byte(`nodes:
  - name: n
    system: dgxh100
    gpus: 2
    pods:
      - {namespace: ns, name: p, gpu: 0, load: training, memory: 1GiB}
    faults:
`+faults), "faults.yaml")
	if err != nil {
		panic(err)
	}
	return sc
}

func TestLostGPU(t *testing.T) {
	s := newSim(t, faultScenario("      - {gpu: 0, kind: lost, at: 1h}\n"), "n")
	lib := s.Interface()
	d, other := handle(t, lib, 0), handle(t, lib, 1)
	if _, r := d.GetPowerUsage(); r != nvml.SUCCESS {
		t.Fatalf("GPU failed before its fault: %v", r)
	}
	s.Advance(fixedStart.Add(time.Hour))
	for name, r := range map[string]nvml.Return{
		"GetUUID":     second(d.GetUUID()),
		"GetPower":    second(d.GetPowerUsage()),
		"GetMemory":   second(d.GetMemoryInfo()),
		"GetProcs":    second(d.GetComputeRunningProcesses()),
		"GetMigMode":  third(d.GetMigMode()),
		"GetEnergy":   second(d.GetTotalEnergyConsumption()),
		"GetUtil":     second(d.GetUtilizationRates()),
		"GetClock":    second(d.GetClockInfo(nvml.CLOCK_SM)),
		"GetPciInfo":  second(d.GetPciInfo()),
		"GpmSupport":  second(d.GpmQueryDeviceSupport()),
		"GetName":     second(d.GetName()),
		"GetTemp":     second(d.GetTemperature(nvml.TEMPERATURE_GPU)),
		"GetReasons":  second(d.GetCurrentClocksEventReasons()),
		"GetEcc":      second(d.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.AGGREGATE_ECC)),
		"GetProcUtil": second(d.GetProcessUtilization(0)),
	} {
		if r != nvml.ERROR_GPU_IS_LOST {
			t.Errorf("%s on a lost GPU = %v, want ERROR_GPU_IS_LOST", name, r)
		}
	}
	if _, r := other.GetPowerUsage(); r != nvml.SUCCESS {
		t.Errorf("the other GPU failed too: %v", r)
	}
	if _, r := lib.DeviceGetHandleByIndex(0); r != nvml.SUCCESS {
		t.Errorf("the lost GPU's handle is gone: %v", r)
	}
}

func second[T any](_ T, r nvml.Return) nvml.Return        { return r }
func third[T, U any](_ T, _ U, r nvml.Return) nvml.Return { return r }

func TestHungGPUBlocksUntilClose(t *testing.T) {
	s, err := NewNode(faultScenario("      - {gpu: 0, kind: hang, at: 10m}\n"), "n", fixedStart)
	if err != nil {
		t.Fatal(err)
	}
	lib := s.Interface()
	d, other := handle(t, lib, 0), handle(t, lib, 1)
	s.Advance(fixedStart.Add(10 * time.Minute))
	done := make(chan nvml.Return)
	go func() {
		_, r := d.GetPowerUsage()
		done <- r
	}()
	select {
	case r := <-done:
		t.Fatalf("call on a hung GPU returned %v", r)
	case <-time.After(50 * time.Millisecond):
	}
	// The rest of the node, and Advance, go on.
	if _, r := other.GetPowerUsage(); r != nvml.SUCCESS {
		t.Errorf("other GPU: %v", r)
	}
	s.Advance(fixedStart.Add(20 * time.Minute))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r != nvml.ERROR_UNINITIALIZED {
			t.Errorf("hung call returned %v after Close, want ERROR_UNINITIALIZED", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("hung call still blocked after Close")
	}
	if _, r := other.GetPowerUsage(); r != nvml.ERROR_UNINITIALIZED {
		t.Errorf("call after Close = %v", r)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestXIDDeliveredOnce(t *testing.T) {
	s := newSim(t, faultScenario("      - {gpu: 0, kind: xid, xid: 48, at: 1h}\n      - {gpu: 1, kind: xid, xid: 79, at: 2h}\n"), "n")
	lib := s.Interface()
	d0, d1 := handle(t, lib, 0), handle(t, lib, 1)
	set, _ := lib.EventSetCreate()
	ok(t, "RegisterEvents", d0.RegisterEvents(nvml.EventTypeXidCriticalError, set))
	ok(t, "RegisterEvents", lib.DeviceRegisterEvents(d1, nvml.EventTypeXidCriticalError|nvml.EventTypeSingleBitEccError, set))
	unregistered, _ := lib.EventSetCreate()

	s.Advance(fixedStart.Add(59 * time.Minute))
	if _, r := set.Wait(10); r != nvml.ERROR_TIMEOUT {
		t.Fatalf("event before its time: %v", r)
	}
	s.Advance(fixedStart.Add(90 * time.Minute))
	ev, r := set.Wait(1000)
	ok(t, "Wait", r)
	if ev.Device != d0 || ev.EventType != nvml.EventTypeXidCriticalError || ev.EventData != 48 || ev.GpuInstanceId != noInstance {
		t.Errorf("event = %+v", ev)
	}
	if _, r := set.Wait(0); r != nvml.ERROR_TIMEOUT {
		t.Errorf("XID delivered twice: %v", r)
	}
	if unc, _ := d0.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC); unc != 1 {
		t.Errorf("XID 48 left %d uncorrected ECC errors, want 1", unc)
	}
	if _, _, pending, _, _ := d0.GetRemappedRows(); !pending {
		t.Error("XID 48 left no row remapping pending")
	}
	s.Advance(fixedStart.Add(90 * time.Minute)) // same time again: nothing new
	if _, r := set.Wait(0); r != nvml.ERROR_TIMEOUT {
		t.Errorf("re-Advance re-delivered: %v", r)
	}

	// A waiter blocked before the event wakes up when Advance raises it.
	got := make(chan nvml.EventData, 1)
	go func() {
		ev, _ := lib.EventSetWait(set, 5000)
		got <- ev
	}()
	time.Sleep(10 * time.Millisecond)
	s.Advance(fixedStart.Add(3 * time.Hour))
	select {
	case ev := <-got:
		if ev.Device != d1 || ev.EventData != 79 {
			t.Errorf("event = %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken by the XID")
	}
	if _, r := d1.GetUUID(); r != nvml.ERROR_GPU_IS_LOST {
		t.Errorf("after XID 79 the GPU answers %v, want ERROR_GPU_IS_LOST", r)
	}
	if _, r := unregistered.Wait(0); r != nvml.ERROR_TIMEOUT {
		t.Errorf("unregistered set got an event: %v", r)
	}
	ok(t, "Free", set.Free())
	if _, r := set.Wait(0); r != nvml.ERROR_INVALID_ARGUMENT {
		t.Errorf("Wait after Free = %v", r)
	}
}

func TestWaitReturnsOnClose(t *testing.T) {
	s, err := NewNode(faultScenario(""), "n", fixedStart)
	if err != nil {
		t.Fatal(err)
	}
	set, _ := s.Interface().EventSetCreate()
	done := make(chan nvml.Return)
	go func() {
		_, r := set.Wait(60000)
		done <- r
	}()
	time.Sleep(10 * time.Millisecond)
	_ = s.Close()
	select {
	case r := <-done:
		if r != nvml.ERROR_UNINITIALIZED {
			t.Errorf("Wait after Close = %v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait still blocked after Close")
	}
}

// TestConcurrentReadersAndAdvance is for the race detector: one reader per
// GPU while time advances.
func TestConcurrentReadersAndAdvance(t *testing.T) {
	sc := Default()
	s := newSim(t, sc, "gpu-h100-01")
	lib := s.Interface()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 8 {
		d := handle(t, lib, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sample, _ := lib.GpmSampleAlloc()
			for {
				select {
				case <-stop:
					return
				default:
				}
				d.GetMemoryInfo()
				d.GetComputeRunningProcesses()
				d.GetProcessUtilization(0)
				d.GetPowerUsage()
				sample.Get(d)
				if m, r := d.GetMigDeviceHandleByIndex(0); r == nvml.SUCCESS {
					m.GetMemoryInfo()
				}
				_ = s.Pods()
			}
		}()
	}
	for step := range 200 {
		s.Advance(fixedStart.Add(time.Duration(step) * time.Minute))
	}
	close(stop)
	wg.Wait()
}
