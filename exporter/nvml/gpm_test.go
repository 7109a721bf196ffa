package nvml

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestGPMTwoSamples(t *testing.T) {
	r := newRig(t, dgxh100.New())
	f := enableGPM(t, r, 40) // 40 % activity between two samples
	b := r.open(t, time.Second)

	first := sample(t, b).Devices[0]
	for _, v := range []float64{first.SMActive, first.SMOccupancy, first.TensorActive, first.DRAMActive} {
		if !isNA(v) {
			t.Fatalf("first sample has GPM value %v, want NA", v)
		}
	}
	for range 3 {
		s := sample(t, b)
		if len(s.Errors) != 0 {
			t.Errorf("Errors = %v", s.Errors)
		}
		for i, d := range s.Devices {
			if !near(d.SMActive, 0.40) || !near(d.SMOccupancy, 0.20) || !near(d.TensorActive, 0.10) {
				t.Errorf("gpu %d: SM active %v occupancy %v tensor %v, want 0.4 0.2 0.1",
					i, d.SMActive, d.SMOccupancy, d.TensorActive)
			}
			if !isNA(d.DRAMActive) {
				t.Errorf("gpu %d: DRAM active %v from a metric NVML refused", i, d.DRAMActive)
			}
		}
	}
	if f.allocs != 16 {
		t.Errorf("%d GPM samples allocated for 8 GPUs over 4 samples, want 2 per GPU", f.allocs)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := f.liveSamples(); n != 0 {
		t.Errorf("%d GPM samples leaked after Close", n)
	}
}

func TestGPMFailedSampleRestarts(t *testing.T) {
	r := newRig(t, dgxh100.New())
	enableGPM(t, r, 30)
	take := r.srv.GpmSampleGetFunc
	fail := false
	r.srv.GpmSampleGetFunc = func(dev gonvml.Device, s gonvml.GpmSample) gonvml.Return {
		if fail && dev == r.devs[0] {
			return gonvml.ERROR_UNKNOWN
		}
		return take(dev, s)
	}
	b := r.open(t, time.Second)
	sample(t, b)
	fail = true
	s := sample(t, b)
	if !isNA(s.Devices[0].SMActive) || s.Errors["nvmlGpmSampleGet"] != 1 {
		t.Errorf("failed sample: SM active %v, Errors %v", s.Devices[0].SMActive, s.Errors)
	}
	fail = false
	// The counter moved on while the failed reads were skipped; pairing
	// across the gap would report 60 %, so the first read after is NA.
	if d := sample(t, b).Devices[0]; !isNA(d.SMActive) {
		t.Errorf("SM active %v right after a failed sample, want NA", d.SMActive)
	}
	if d := sample(t, b).Devices[0]; !near(d.SMActive, 0.30) {
		t.Errorf("SM active %v, want 0.3", d.SMActive)
	}
}

func TestGPMUnsupported(t *testing.T) {
	r := newRig(t, dgxh100.New())
	var queries atomic.Int32
	for _, d := range r.devs {
		d.GpmQueryDeviceSupportFunc = func() (gonvml.GpmSupport, gonvml.Return) {
			queries.Add(1)
			return gonvml.GpmSupport{}, gonvml.ERROR_NOT_SUPPORTED
		}
	}
	// Left unset: any use would panic and be counted.
	r.srv.GpmSampleAllocFunc = nil
	b := r.open(t, time.Second)
	for range 3 {
		s := sample(t, b)
		if len(s.Errors) != 0 || !isNA(s.Devices[0].SMActive) {
			t.Errorf("Errors %v, SM active %v", s.Errors, s.Devices[0].SMActive)
		}
	}
	if n := queries.Load(); n != 8 {
		t.Errorf("GPM support queried %d times for 8 GPUs, want once each", n)
	}
}

func TestGPMPerMIGInstance(t *testing.T) {
	r, handles := migRig(t)
	f := enableGPM(t, r, 25)
	b := r.open(t, time.Second)

	sample(t, b)
	d := sample(t, b).Devices[0]
	if !isNA(d.SMActive) {
		t.Errorf("device-level SM active %v in MIG mode, want NA", d.SMActive)
	}
	for _, in := range d.Instances {
		if !near(in.SMActive, 0.25) || !near(in.SMOccupancy, 0.125) || !near(in.TensorActive, 0.0625) || !isNA(in.DRAMActive) {
			t.Errorf("instance %s: %v %v %v %v", in.UUID, in.SMActive, in.SMOccupancy, in.TensorActive, in.DRAMActive)
		}
	}

	// A destroyed instance's samples are freed at once, not at Close.
	live := f.liveSamples()
	delete(handles, 3)
	sample(t, b)
	if got := f.liveSamples(); got != live-2 {
		t.Errorf("%d live GPM samples after an instance went away, want %d", got, live-2)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n := f.liveSamples(); n != 0 {
		t.Errorf("%d GPM samples leaked after Close", n)
	}
}
