package sim

import (
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// gpmSample is a GPM sample buffer. Like the hardware's, it snapshots
// cumulative activity counters; GpmMetricsGet divides the difference of two
// snapshots by the time between them, so metrics are averages over the
// interval however the simulated time was stepped.
type gpmSample struct {
	lib *library

	mu    sync.Mutex
	snap  gpmSnap
	valid bool
	freed bool
}

// gpmSnap is what a sample holds.
type gpmSnap struct {
	dev      *device
	instance int // MIG instance index, -1 for the whole device
	at       time.Time
	cum      gpmVector
	inst     gpmVector // values at the sample time, for zero-length intervals
}

func (g *gpmSample) Free() nvml.Return {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.freed, g.valid = true, false
	return nvml.SUCCESS
}

// Get samples a whole device. On a MIG device handle it is unsupported, as
// in NVML: instances are sampled through MigGet on the parent.
func (g *gpmSample) Get(dev nvml.Device) nvml.Return {
	d, ok := g.target(dev)
	if !ok {
		if _, isMIG := dev.(*migDevice); isMIG {
			return nvml.ERROR_NOT_SUPPORTED
		}
		return nvml.ERROR_INVALID_ARGUMENT
	}
	if r := d.enter(); r != nvml.SUCCESS {
		return r
	}
	defer d.leave()
	if !d.sim.sys.gpm {
		return nvml.ERROR_NOT_SUPPORTED
	}
	return g.record(d, -1, d.gpmCum, d.st.gpm)
}

// MigGet samples the MIG instance with GPU instance ID gi of dev.
func (g *gpmSample) MigGet(dev nvml.Device, gi int) nvml.Return {
	d, ok := g.target(dev)
	if !ok {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	if r := d.enter(); r != nvml.SUCCESS {
		return r
	}
	defer d.leave()
	if !d.sim.sys.gpm {
		return nvml.ERROR_NOT_SUPPORTED
	}
	for k, m := range d.mig {
		if m.placed.giID == gi {
			return g.record(d, k, m.gpmCum, m.gpm)
		}
	}
	return nvml.ERROR_NOT_FOUND
}

func (g *gpmSample) target(dev nvml.Device) (*device, bool) {
	d, ok := dev.(*device)
	return d, ok && d.sim.lib == g.lib
}

func (g *gpmSample) record(d *device, instance int, cum, inst gpmVector) nvml.Return {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.freed {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	g.snap = gpmSnap{dev: d, instance: instance, at: d.sim.now, cum: cum, inst: inst}
	g.valid = true
	return nvml.SUCCESS
}

func (g *gpmSample) snapshot() (gpmSnap, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.snap, g.valid
}

// gpmMetricIDs maps the GPM metrics simulated to their signal.
var gpmMetricIDs = map[uint32]int{
	uint32(nvml.GPM_METRIC_SM_UTIL):         gpmSM,
	uint32(nvml.GPM_METRIC_SM_OCCUPANCY):    gpmOccupancy,
	uint32(nvml.GPM_METRIC_ANY_TENSOR_UTIL): gpmTensor,
	uint32(nvml.GPM_METRIC_DRAM_BW_UTIL):    gpmDRAM,
}

// gpmMetricsGet fills m.Metrics[:m.NumMetrics] with percentages (0-100) as
// NVML does, averaged between Sample1 and Sample2. Metrics not simulated
// get NvmlReturn ERROR_NOT_SUPPORTED.
func gpmMetricsGet(m *nvml.GpmMetricsGetType) nvml.Return {
	if m == nil || m.NumMetrics > uint32(len(m.Metrics)) {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	m.Version = nvml.GPM_METRICS_GET_VERSION
	s1, ok1 := m.Sample1.(*gpmSample)
	s2, ok2 := m.Sample2.(*gpmSample)
	if !ok1 || !ok2 {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	a, va := s1.snapshot()
	b, vb := s2.snapshot()
	if !va || !vb || a.dev != b.dev || a.instance != b.instance || b.at.Before(a.at) {
		return nvml.ERROR_INVALID_ARGUMENT
	}
	var avg gpmVector
	if dt := b.at.Sub(a.at).Seconds(); dt > 0 {
		for k := range avg {
			avg[k] = clamp01((b.cum[k] - a.cum[k]) / dt)
		}
	} else {
		avg = b.inst
	}
	for i := range m.NumMetrics {
		mt := &m.Metrics[i]
		k, ok := gpmMetricIDs[mt.MetricId]
		if !ok {
			mt.Value, mt.NvmlReturn = 0, uint32(nvml.ERROR_NOT_SUPPORTED)
			continue
		}
		mt.Value, mt.NvmlReturn = avg[k]*100, uint32(nvml.SUCCESS)
	}
	return nvml.SUCCESS
}
