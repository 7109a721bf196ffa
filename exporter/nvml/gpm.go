package nvml

import (
	"math"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// gpmSupport caches nvmlGpmQueryDeviceSupport, which cannot change while
// the driver is loaded. A failed query is retried on the next read.
type gpmSupport uint8

const (
	gpmUnknown gpmSupport = iota
	gpmSupported
	gpmUnsupported
)

// gpmMetricIDs are the GPM metrics read, in the order of gpmRatios.
var gpmMetricIDs = [...]gonvml.GpmMetricId{
	gonvml.GPM_METRIC_SM_UTIL,
	gonvml.GPM_METRIC_SM_OCCUPANCY,
	gonvml.GPM_METRIC_ANY_TENSOR_UTIL,
	gonvml.GPM_METRIC_DRAM_BW_UTIL,
}

// gpmRatios holds SM active, SM occupancy, tensor active and DRAM active.
type gpmRatios [len(gpmMetricIDs)]float64

var gpmNA = gpmRatios{gpu.NA, gpu.NA, gpu.NA, gpu.NA}

// gpmPair computes GPM metrics for one GPU or MIG GPU instance. GPM metrics
// are rates between two samples, so two sample buffers are allocated once and
// used in turn: each read fills the older one and pairs it with the other.
type gpmPair struct {
	samples [2]gonvml.GpmSample
	cur     int  // the buffer the next read fills
	primed  bool // samples[1-cur] holds the previous read's sample
	// req is reused: the request struct is ~19 KiB.
	req *gonvml.GpmMetricsGetType
}

// sample takes a new GPM sample of dev (of its GPU instance gi when mig)
// and returns the ratios since the previous one, NA on the first.
func (p *gpmPair) sample(c *caller, lib gonvml.Interface, dev gonvml.Device, gi int, mig bool) gpmRatios {
	for i, s := range p.samples {
		if s != nil {
			continue
		}
		s, ok := get(c, callGpmSampleAlloc, lib.GpmSampleAlloc)
		if !ok || s == nil {
			return gpmNA
		}
		p.samples[i] = s
	}
	s := p.samples[p.cur]
	var ok bool
	if mig {
		ok = do(c, callGpmMigSampleGet, func() gonvml.Return { return lib.GpmMigSampleGet(dev, gi, s) })
	} else {
		ok = do(c, callGpmSampleGet, func() gonvml.Return { return lib.GpmSampleGet(dev, s) })
	}
	if !ok {
		p.primed = false
		return gpmNA
	}
	r := gpmNA
	if p.primed {
		r = p.metrics(c, lib, p.samples[1-p.cur], s)
	}
	p.primed = true
	p.cur = 1 - p.cur
	return r
}

func (p *gpmPair) metrics(c *caller, lib gonvml.Interface, older, newer gonvml.GpmSample) gpmRatios {
	if p.req == nil {
		p.req = new(gonvml.GpmMetricsGetType)
	}
	q := p.req
	q.NumMetrics = uint32(len(gpmMetricIDs))
	q.Sample1, q.Sample2 = older, newer
	for i, id := range gpmMetricIDs {
		q.Metrics[i] = gonvml.GpmMetric{MetricId: uint32(id)}
	}
	ok := do(c, callGpmMetricsGet, func() gonvml.Return { return lib.GpmMetricsGet(q) })
	q.Sample1, q.Sample2 = nil, nil
	if !ok {
		return gpmNA
	}
	r := gpmNA
	for i, id := range gpmMetricIDs {
		m := q.Metrics[i]
		if m.MetricId != uint32(id) || gonvml.Return(m.NvmlReturn) != gonvml.SUCCESS {
			continue
		}
		if v := m.Value; !math.IsNaN(v) && !math.IsInf(v, 0) {
			r[i] = percent(v)
		}
	}
	return r
}

// free releases both sample buffers. It runs even on a caller that saw the
// GPU lost: the buffers are host memory and must not leak.
func (p *gpmPair) free(c *caller) {
	for i, s := range p.samples {
		if s == nil {
			continue
		}
		freeSample(c, s)
		p.samples[i] = nil
	}
	p.primed = false
}

func freeSample(c *caller, s gonvml.GpmSample) {
	gone := c.gone
	c.gone = false
	do(c, callGpmSampleFree, s.Free)
	c.gone = gone
}

// queryGPM learns once whether the GPU supports GPM.
func (d *device) queryGPM(h gonvml.Device) {
	if d.gpmMode != gpmUnknown {
		return
	}
	c := &d.c
	s, ok := get(c, callGpmQueryDeviceSupport, h.GpmQueryDeviceSupport)
	switch {
	case ok && s.IsSupportedDevice != 0:
		d.gpmMode = gpmSupported
	case ok || unsupported(c.last):
		d.gpmMode = gpmUnsupported
	}
}

// readGPM fills the device's profiling ratios. In MIG mode GPM is sampled
// per GPU instance instead (see readInstance), so the device values stay NA.
func (d *device) readGPM(h gonvml.Device, out *gpu.Device, migMode bool) {
	if d.gpmMode != gpmSupported {
		return
	}
	if migMode {
		d.gpm.primed = false
		return
	}
	r := d.gpm.sample(&d.c, d.lib, h, 0, false)
	out.SMActive, out.SMOccupancy, out.TensorActive, out.DRAMActive = r[0], r[1], r[2], r[3]
}
