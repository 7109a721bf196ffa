package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/gpulens/gpulens/vocab"
)

// PodState is a scenario pod running now, with everything the simulated
// kubelet (pod-resources List), the /proc fixture builder and the
// attribution tests need to tie NVML's view to the pod. Every identifier is
// derived from the scenario seed and names, so it is stable across runs.
type PodState struct {
	Namespace string
	Name      string
	Container string
	// UID is the pod's metadata.uid, a UUID.
	UID string
	// ContainerID is the CRI container ID: 64 hex digits, without the
	// "containerd://" scheme.
	ContainerID string
	// PIDs are the container's host PIDs, as NVML reports them in
	// ProcessInfo.Pid.
	PIDs []uint32

	// GPUIndex and GPUUUID name the physical GPU ("GPU-...").
	GPUIndex int
	GPUUUID  string
	// Sharing is none, time-slicing, mps or mig; Replicas is the replica
	// count of a time-sliced or MPS GPU, else 0.
	Sharing  vocab.Sharing
	Replicas int
	// Replica is the pod's replica of a shared GPU (0..Replicas-1), -1 on
	// whole GPUs and MIG.
	Replica int

	// MIG fields, set when Sharing is mig: the instance's index in the
	// geometry, its UUID ("MIG-..."), profile, and NVML GPU / compute
	// instance IDs. GPUInstanceID and ComputeInstanceID are -1 otherwise.
	MIGInstance       int
	MIGUUID           string
	MIGProfile        string
	GPUInstanceID     int
	ComputeInstanceID int

	// ResourceName is the extended resource the pod requested and
	// DeviceID the device-plugin ID the kubelet assigned it: GPU-<uuid>
	// for a whole GPU, GPU-<uuid>::<replica> for a shared one (the
	// device plugin's replica form), MIG-<uuid> for a MIG instance.
	ResourceName vocab.Resource
	DeviceID     string

	// Claim is the ResourceClaim (in the pod's namespace) the pod holds
	// its GPU or MIG instance through on a DRA node, and DRADevice that
	// device's name in the driver's ResourceSlice (pool: the node); both
	// are empty, and ResourceName and DeviceID set, on other nodes.
	Claim     string
	DRADevice string

	// Load is the workload profile; StartedAt when the pod started.
	Load      string
	StartedAt time.Time
	// Restarts counts the container's OOM restarts so far (leak only).
	Restarts int
}

// Pods returns the pods running at the current simulated time, in
// scenario order.
func (s *NodeSim) Pods() []PodState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []PodState
	for _, p := range s.pods {
		if p.running {
			out = append(out, s.podState(p))
		}
	}
	return out
}

func (s *NodeSim) podState(p *simPod) PodState {
	d := p.dev
	ps := PodState{
		Namespace:         p.spec.Namespace,
		Name:              p.spec.Name,
		Container:         p.spec.Container,
		UID:               p.uid,
		ContainerID:       p.containerID,
		PIDs:              append([]uint32(nil), p.pids...),
		GPUIndex:          d.index,
		GPUUUID:           d.uuid,
		Sharing:           d.layout.mode,
		Replicas:          d.layout.replicas,
		Replica:           p.replica,
		MIGInstance:       -1,
		GPUInstanceID:     -1,
		ComputeInstanceID: -1,
		ResourceName:      d.resourceName(),
		DeviceID:          d.uuid,
		Load:              p.spec.Load,
		StartedAt:         s.start.Add(p.life.start),
	}
	if p.replica >= 0 {
		ps.DeviceID = fmt.Sprintf("%s::%d", d.uuid, p.replica)
	}
	if p.instance >= 0 {
		m := d.mig[p.instance]
		ps.MIGInstance = p.instance
		ps.MIGUUID = m.uuid
		ps.MIGProfile = m.placed.profile.name
		ps.GPUInstanceID = m.placed.giID
		ps.ComputeInstanceID = 0
		ps.ResourceName = vocab.MIGResource(m.placed.profile.name)
		ps.DeviceID = m.uuid
	}
	if s.node.DRA {
		ps.Claim, ps.DRADevice = ClaimName(&p.spec), draGPUName(d.index)
		if p.instance >= 0 {
			ps.DRADevice = s.draMIGName(d.index, d.mig[p.instance].placed)
		}
		ps.ResourceName, ps.DeviceID = "", ""
	}
	if period := leakPeriod(&p.spec, p.memLimit); period > 0 {
		ps.Restarts = int(s.now.Sub(ps.StartedAt) / period)
	}
	return ps
}

func (d *device) resourceName() vocab.Resource {
	if d.layout.rename {
		return vocab.ResourceGPUShared
	}
	return vocab.ResourceGPU
}

// DeviceInfo is a GPU as the device plugin advertises it: what the
// simulated kubelet returns from GetAllocatableResources.
type DeviceInfo struct {
	Index    int
	UUID     string
	Model    string
	PCIBusID string // NVML form: 00000000:1B:00.0
	Sharing  vocab.Sharing
	Replicas int
	// ResourceName and DeviceIDs are the resource and IDs the GPU is
	// advertised under: one GPU-<uuid>, or Replicas GPU-<uuid>::<n>.
	// Empty for a MIG GPU, whose instances are advertised instead.
	ResourceName vocab.Resource
	DeviceIDs    []string
	Instances    []InstanceInfo
	// DRADevice is the GPU's name in the DRA driver's ResourceSlice on a
	// DRA node, whose GPUs no device plugin advertises (ResourceName and
	// DeviceIDs empty); "" elsewhere.
	DRADevice string
}

// InstanceInfo is a MIG instance of a GPU.
type InstanceInfo struct {
	Index             int
	UUID              string // MIG-...
	Profile           string // 1g.10gb
	GPUInstanceID     int
	ComputeInstanceID int
	Slices            int // compute slices
	MemorySlices      int // memory eighths
	MemoryBytes       uint64
	ResourceName      vocab.Resource // nvidia.com/mig-1g.10gb; "" on a DRA node
	DRADevice         string         // name in the DRA driver's ResourceSlice
}

// Devices describes every GPU of the node, in index order.
func (s *NodeSim) Devices() []DeviceInfo {
	out := make([]DeviceInfo, len(s.devices))
	for i, d := range s.devices {
		di := DeviceInfo{
			Index:    d.index,
			UUID:     d.uuid,
			Model:    s.sys.config.Name,
			PCIBusID: d.busID,
			Sharing:  d.layout.mode,
			Replicas: d.layout.replicas,
		}
		switch d.layout.mode {
		case ModeMIG:
			for k, m := range d.mig {
				p := m.placed.profile
				di.Instances = append(di.Instances, InstanceInfo{
					Index: k, UUID: m.uuid, Profile: p.name,
					GPUInstanceID: m.placed.giID, ComputeInstanceID: 0,
					Slices: p.slices, MemorySlices: p.memSlices, MemoryBytes: m.memTotal,
					ResourceName: vocab.MIGResource(p.name), // the simulator's MIG strategy is mixed
				})
			}
		case ModeTimeSlicing, ModeMPS:
			di.ResourceName = d.resourceName()
			for r := range d.layout.replicas {
				di.DeviceIDs = append(di.DeviceIDs, fmt.Sprintf("%s::%d", d.uuid, r))
			}
		default:
			di.ResourceName = vocab.ResourceGPU
			di.DeviceIDs = []string{d.uuid}
		}
		if s.node.DRA {
			di.DRADevice, di.ResourceName, di.DeviceIDs = draGPUName(d.index), "", nil
			for k := range di.Instances {
				di.Instances[k].DRADevice = s.draMIGName(d.index, d.mig[k].placed)
				di.Instances[k].ResourceName = ""
			}
		}
		out[i] = di
	}
	return out
}

// Validate checks a scenario built in Go (Parse already validates what it
// returns). Errors carry field paths but no lines.
func (sc *Scenario) Validate() error {
	d := &decoder{file: "scenario", lines: map[string]int{}}
	(&validator{at: d}).scenario(sc)
	return errors.Join(d.errs...)
}
