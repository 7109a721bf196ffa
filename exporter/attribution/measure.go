package attribution

import (
	"github.com/gpulens/gpulens/exporter/gpu"
)

// measure sets the measured values of every record and bounds measured
// memory by what the devices report as used.
func (p *pass) measure() {
	for _, g := range p.groups {
		dev := &p.snap.Devices[g.at.dev]
		switch {
		case !dev.Up:
			// Identity and allocation only: a lost GPU still belongs to
			// the pods holding it.
		case !g.shared():
			measureAlone(dev, g)
		case p.process:
			p.measureProcesses(dev, g)
		}
	}
	p.boundMemory()
}

// measureAlone reads the device (or MIG instance) of a container that holds
// it alone: everything it reports is that container's.
func measureAlone(dev *gpu.Device, g *group) {
	rec := &g.tenants[0].rec
	util, mem, utilMethod := dev.Utilization, dev.MemoryUsedBytes, MethodDevice
	if g.at.inst >= 0 {
		in := &dev.Instances[g.at.inst]
		util, mem, utilMethod = in.SMActive, in.MemoryUsedBytes, MethodMIGGPM
	}
	if gpu.Valid(util) {
		rec.Utilization, rec.UtilizationMethod = clamp01(util), utilMethod
	}
	if gpu.Valid(mem) {
		rec.MemoryUsedBytes, rec.MemoryMethod = mem, MethodDevice
	}
}

// measureProcesses attributes the device's processes to the containers
// sharing it.
func (p *pass) measureProcesses(dev *gpu.Device, g *group) {
	var inst *gpu.Instance
	if g.at.inst >= 0 {
		inst = &dev.Instances[g.at.inst]
	}
	sampled := false
	for k := range dev.Processes {
		proc := &dev.Processes[k]
		if inst != nil && !onInstance(proc, inst) {
			continue
		}
		sampled = sampled || gpu.Valid(proc.SMUtilization)
		t := p.owner(g, proc.PID)
		if t == nil {
			continue
		}
		if gpu.Valid(proc.MemoryUsedBytes) {
			t.procMemory += proc.MemoryUsedBytes
		} else {
			t.procMemoryNA = true
		}
		if gpu.Valid(proc.SMUtilization) {
			t.procSM += proc.SMUtilization
		}
	}
	// NVML has no per-process utilization inside MIG. Elsewhere a process
	// without a sample was idle since the last one, unless the device was
	// busy while none of its processes had a sample: then the samples are
	// missing, and zeros would be wrong.
	utilKnown := inst == nil && (sampled || (gpu.Valid(dev.Utilization) && dev.Utilization == 0))
	for _, t := range g.tenants {
		if !t.procMemoryNA {
			t.rec.MemoryUsedBytes, t.rec.MemoryMethod = t.procMemory, MethodProcess
		}
		if utilKnown && t.rec.Allocation > 0 {
			// Not clamped: time-slicing gives idle time away, so a tenant
			// can use several times its share while the others idle, and
			// that is exactly what training-on-shared-gpu looks for.
			t.rec.Utilization = clamp01(t.procSM) / t.rec.Allocation
			t.rec.UtilizationMethod = MethodProcess
		}
	}
	if inst != nil && gpu.Valid(inst.MemoryUsedBytes) {
		scaleProcessMemory(g.tenants, inst.MemoryUsedBytes)
	}
}

// onInstance reports whether a process runs on the MIG instance; NVML may
// leave the compute instance unset (-1).
func onInstance(proc *gpu.Process, in *gpu.Instance) bool {
	return proc.GPUInstanceID == in.GPUInstanceID &&
		(proc.ComputeInstanceID < 0 || proc.ComputeInstanceID == in.ComputeInstanceID)
}

// owner finds the tenant of g a process belongs to, counting the processes
// that belong to none.
func (p *pass) owner(g *group, pid uint32) *tenant {
	ref, res := p.pids.resolve(pid)
	switch res {
	case pidFailed:
		p.stats.ProcErrors++
		return nil
	case pidInPod:
	default:
		p.stats.UnattributedProcesses++
		return nil
	}
	pod, ok := p.in.Pods.ByUID(ref.PodUID)
	if !ok {
		p.stats.UnattributedProcesses++
		return nil
	}
	// An unknown container ID is a container so new that the pod status
	// does not show it yet; the next pass will find it.
	name, ok := pod.Containers[ref.ContainerID]
	if !ok {
		p.stats.UnattributedProcesses++
		return nil
	}
	t := g.tenant(pod.Namespace, pod.Name, name)
	if t == nil {
		p.stats.UnattributedProcesses++
	}
	return t
}

// boundMemory keeps measured memory on each physical GPU within the memory
// the GPU reports as used. Process memory and device memory are read at
// slightly different instants and NVML counts context overhead differently
// in each, so process sums can exceed the device's figure.
func (p *pass) boundMemory() {
	type sums struct{ device, process float64 }
	perGPU := make(map[int]*sums, len(p.snap.Devices))
	for _, g := range p.groups {
		s := perGPU[g.at.dev]
		if s == nil {
			s = &sums{}
			perGPU[g.at.dev] = s
		}
		for _, t := range g.tenants {
			switch t.rec.MemoryMethod {
			case MethodDevice:
				s.device += t.rec.MemoryUsedBytes
			case MethodProcess:
				s.process += t.rec.MemoryUsedBytes
			}
		}
	}
	for _, g := range p.groups {
		used := p.snap.Devices[g.at.dev].MemoryUsedBytes
		s := perGPU[g.at.dev]
		if !gpu.Valid(used) || s.device+s.process <= used {
			continue
		}
		// Device readings are NVML's own and are kept whole when they fit;
		// the process sums absorb the difference.
		deviceScale, processScale := 1.0, 0.0
		if s.device <= used {
			if s.process > 0 {
				processScale = (used - s.device) / s.process
			}
		} else {
			deviceScale = used / (s.device + s.process)
			processScale = deviceScale
		}
		for _, t := range g.tenants {
			switch t.rec.MemoryMethod {
			case MethodDevice:
				t.rec.MemoryUsedBytes *= deviceScale
			case MethodProcess:
				t.rec.MemoryUsedBytes *= processScale
			}
		}
	}
}

// scaleProcessMemory bounds the process memory of a group's tenants by
// limit, proportionally.
func scaleProcessMemory(tenants []*tenant, limit float64) {
	sum := 0.0
	for _, t := range tenants {
		if t.rec.MemoryMethod == MethodProcess {
			sum += t.rec.MemoryUsedBytes
		}
	}
	if sum <= limit || sum == 0 {
		return
	}
	for _, t := range tenants {
		if t.rec.MemoryMethod == MethodProcess {
			t.rec.MemoryUsedBytes *= limit / sum
		}
	}
}

func clamp01(v float64) float64 { return min(max(v, 0), 1) }
