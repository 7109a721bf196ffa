package sim

import (
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// library is the simulated NVML library of one node. It embeds go-nvml's
// mock server, which answers every call not simulated here.
type library struct {
	nvml.Interface
	sim *NodeSim
	srv *server.Server

	initMu sync.Mutex
	inits  int

	// sets are the live event sets, guarded by NodeSim.mu.
	sets []*eventSet
}

var _ nvml.Interface = (*library)(nil)

func newLibrary(s *NodeSim, count int) *library {
	sys := s.sys
	srv := server.NewServerWithGPUs(sys.driverVersion, sys.nvmlVersion, sys.cudaVersion,
		gpus.Multiple(count, sys.config)...)
	fillLibrary(&srv.Interface)
	return &library{Interface: srv, sim: s, srv: srv}
}

// Init and Shutdown count references like NVML: every Init needs a
// Shutdown, and a Shutdown without Init fails.
func (l *library) Init() nvml.Return {
	l.initMu.Lock()
	defer l.initMu.Unlock()
	l.inits++
	return nvml.SUCCESS
}

func (l *library) InitWithFlags(uint32) nvml.Return { return l.Init() }

func (l *library) Shutdown() nvml.Return {
	l.initMu.Lock()
	defer l.initMu.Unlock()
	if l.inits == 0 {
		return nvml.ERROR_UNINITIALIZED
	}
	l.inits--
	return nvml.SUCCESS
}

func (l *library) ErrorString(r nvml.Return) string { return r.Error() }

func (l *library) SystemGetDriverVersion() (string, nvml.Return) {
	return l.sim.sys.driverVersion, nvml.SUCCESS
}

func (l *library) SystemGetNVMLVersion() (string, nvml.Return) {
	return l.sim.sys.nvmlVersion, nvml.SUCCESS
}

func (l *library) SystemGetCudaDriverVersion() (int, nvml.Return) {
	return l.sim.sys.cudaVersion, nvml.SUCCESS
}

func (l *library) SystemGetCudaDriverVersion_v2() (int, nvml.Return) {
	return l.sim.sys.cudaVersion, nvml.SUCCESS
}

func (l *library) DeviceGetCount() (int, nvml.Return) { return len(l.sim.devices), nvml.SUCCESS }

// DeviceGetHandleByIndex succeeds even for a lost or hung GPU: the handle
// exists, calls on it fail. This lets the reader report such a GPU as
// down under its index instead of losing it.
func (l *library) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	if i < 0 || i >= len(l.sim.devices) {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	return l.sim.devices[i], nvml.SUCCESS
}

// DeviceGetHandleByUUID accepts GPU and MIG UUIDs, as NVML does.
func (l *library) DeviceGetHandleByUUID(uuid string) (nvml.Device, nvml.Return) {
	for _, d := range l.sim.devices {
		if d.uuid == uuid {
			return d, nvml.SUCCESS
		}
		for _, m := range d.mig {
			if m.uuid == uuid {
				return m, nvml.SUCCESS
			}
		}
	}
	return nil, nvml.ERROR_NOT_FOUND
}

func (l *library) DeviceGetHandleByPciBusId(busID string) (nvml.Device, nvml.Return) {
	want := busIDString(busID)
	for _, d := range l.sim.devices {
		if d.busID == want {
			return d, nvml.SUCCESS
		}
	}
	return nil, nvml.ERROR_NOT_FOUND
}

func (l *library) GpmQueryDeviceSupport(d nvml.Device) (nvml.GpmSupport, nvml.Return) {
	if d == nil {
		return nvml.GpmSupport{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return d.GpmQueryDeviceSupport()
}

func (l *library) GpmSampleAlloc() (nvml.GpmSample, nvml.Return) {
	return &gpmSample{lib: l}, nvml.SUCCESS
}

func (l *library) GpmSampleFree(s nvml.GpmSample) nvml.Return {
	if s == nil {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	return s.Free()
}

func (l *library) GpmSampleGet(d nvml.Device, s nvml.GpmSample) nvml.Return {
	if s == nil {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	return s.Get(d)
}

func (l *library) GpmMigSampleGet(d nvml.Device, gi int, s nvml.GpmSample) nvml.Return {
	if s == nil {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	return s.MigGet(d, gi)
}

func (l *library) GpmMetricsGet(m *nvml.GpmMetricsGetType) nvml.Return {
	return gpmMetricsGet(m)
}

func (l *library) EventSetCreate() (nvml.EventSet, nvml.Return) {
	es := newEventSet(l)
	l.sim.mu.Lock()
	defer l.sim.mu.Unlock()
	l.sets = append(l.sets, es)
	return es, nvml.SUCCESS
}

func (l *library) EventSetFree(es nvml.EventSet) nvml.Return {
	if es == nil {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	return es.Free()
}

func (l *library) EventSetWait(es nvml.EventSet, timeoutMs uint32) (nvml.EventData, nvml.Return) {
	if es == nil {
		return nvml.EventData{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return es.Wait(timeoutMs)
}

func (l *library) DeviceRegisterEvents(d nvml.Device, mask uint64, es nvml.EventSet) nvml.Return {
	if d == nil {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	return d.RegisterEvents(mask, es)
}
