package nvml

import (
	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// NVML's "no such instance" id in ProcessInfo outside MIG, and its
// NVML_VALUE_NOT_AVAILABLE for memory it may not disclose.
const (
	noInstanceID      = 0xFFFFFFFF
	valueNotAvailable = ^uint64(0)
)

// readProcesses lists the compute processes of a non-MIG device.
func (d *device) readProcesses(h gonvml.Device) {
	ps, ok := get(&d.c, callGetComputeRunningProcesses, h.GetComputeRunningProcesses)
	if !ok {
		return
	}
	for _, p := range ps {
		d.procs = append(d.procs, process(p, instanceID(p.GpuInstanceId), instanceID(p.ComputeInstanceId)))
	}
}

func process(p gonvml.ProcessInfo, gi, ci int) gpu.Process {
	mem := gpu.NA
	if p.UsedGpuMemory != valueNotAvailable {
		mem = float64(p.UsedGpuMemory)
	}
	return gpu.Process{
		PID:               p.Pid,
		GPUInstanceID:     gi,
		ComputeInstanceID: ci,
		MemoryUsedBytes:   mem,
		SMUtilization:     gpu.NA,
	}
}

func instanceID(id uint32) int {
	if id == noInstanceID {
		return -1
	}
	return int(id)
}

// utilTracker reads per-process utilization samples incrementally: NVML
// keeps a ring buffer of them and returns those newer than the timestamp
// passed, so the newest timestamp seen is kept between reads.
type utilTracker struct {
	lastSeen uint64 // NVML sample timestamp, microseconds
	latest   map[uint32]gonvml.ProcessUtilizationSample
}

// noSamples is NVML's answer when no process ran since lastSeen.
func noSamples(ret gonvml.Return) bool { return ret == gonvml.ERROR_NOT_FOUND }

// read replaces latest with the newest sample of each PID since the last read.
func (u *utilTracker) read(c *caller, h gonvml.Device) {
	clear(u.latest)
	samples, ok := getQuiet(c, callGetProcessUtilization, noSamples, func() ([]gonvml.ProcessUtilizationSample, gonvml.Return) {
		return h.GetProcessUtilization(u.lastSeen)
	})
	if !ok || len(samples) == 0 {
		return
	}
	if u.latest == nil {
		u.latest = make(map[uint32]gonvml.ProcessUtilizationSample, len(samples))
	}
	for _, s := range samples {
		if prev, seen := u.latest[s.Pid]; !seen || s.TimeStamp >= prev.TimeStamp {
			u.latest[s.Pid] = s
		}
		u.lastSeen = max(u.lastSeen, s.TimeStamp)
	}
}

// apply sets the SM ratio of every process that has a sample. Samples of
// processes that have exited since are dropped with the map on next read.
func (u *utilTracker) apply(procs []gpu.Process) {
	if len(u.latest) == 0 {
		return
	}
	for i := range procs {
		if s, ok := u.latest[procs[i].PID]; ok {
			procs[i].SMUtilization = percent(float64(s.SmUtil))
		}
	}
}
