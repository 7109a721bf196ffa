package attribution

import (
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
)

// pass is the working state of one Attribute call.
type pass struct {
	in    Input
	snap  *gpu.Snapshot
	stats *Stats
	pids  *pidCache
	loc   *locator

	groups  []*group // in first-allocation order
	byLoc   map[loc]*group
	process bool // stats.Mode == ModeProcess
}

// group is one physical GPU or MIG instance and the containers holding it.
type group struct {
	at      loc
	tenants []*tenant
	// advertised is how many replicas the node advertises for the device
	// (0 when unknown); units counts the replicas held by live containers.
	advertised int
	units      int
	replicated bool
	// claimed is set when containers hold the device through ResourceClaims:
	// the DRA scheduler gives a device to one claim, so several tenants of
	// one claimed device share that claim (or its consumable capacity).
	claimed bool
}

// shared reports whether more than one container can run on the device at
// once, so that the device's own readings belong to none of them alone.
func (g *group) shared() bool { return g.replicated || len(g.tenants) > 1 }

// tenant is one container on one group; rec is its record in the making.
type tenant struct {
	rec   ContainerGPU
	units int // device IDs the container holds on the group

	procMemory   float64
	procMemoryNA bool
	procSM       float64
}

func (g *group) tenant(namespace, pod, container string) *tenant {
	for _, t := range g.tenants {
		if t.rec.Namespace == namespace && t.rec.Pod == pod && t.rec.Container == container {
			return t
		}
	}
	return nil
}

// collect builds the groups from the allocations of live pods.
func (p *pass) collect() {
	p.process = p.stats.Mode == ModeProcess
	p.byLoc = map[loc]*group{}
	for _, pod := range p.in.Allocations.Pods {
		if !p.live(pod.Namespace, pod.Name) {
			continue
		}
		for _, c := range pod.Containers {
			for _, d := range c.Devices {
				at, ok := p.loc.locate(p.snap, d.Ref)
				if !ok {
					p.stats.UnmatchedDevices++
					continue
				}
				p.add(at, pod, c.Name, d)
			}
			for _, cl := range c.Claims {
				at, dev, ok := p.locateClaim(cl)
				if !ok {
					p.stats.UnmatchedDevices++
					continue
				}
				p.addClaim(at, pod, c.Name, cl, dev)
			}
		}
	}
}

// live reports whether the pod should have series. Without an index every
// pod the kubelet lists counts; an index that has synced knows every pod of
// the node, so one it lacks has been deleted.
func (p *pass) live(namespace, name string) bool {
	if p.in.Pods == nil {
		return true
	}
	pod, ok := p.in.Pods.ByName(namespace, name)
	if !ok {
		return !p.in.Pods.Synced()
	}
	return !pod.Finished()
}

func (p *pass) add(at loc, pod podresources.Pod, container string, d podresources.Device) {
	g := p.byLoc[at]
	if g == nil {
		g = &group{at: at}
		p.byLoc[at] = g
		p.groups = append(p.groups, g)
	}
	shared := d.Ref.Shared || d.Ref.Replica >= 0
	if shared {
		g.replicated = true
		g.units++
		g.advertised = max(g.advertised, p.in.Allocations.Replicas(d.Ref))
	}
	t := g.tenant(pod.Namespace, pod.Name, container)
	if t == nil {
		t = &tenant{rec: p.record(at, pod, container, d)}
		g.tenants = append(g.tenants, t)
	}
	t.units++
}

// record fills in the identity of a container's hold on the device at.
func (p *pass) record(at loc, pod podresources.Pod, container string, d podresources.Device) ContainerGPU {
	dev := &p.snap.Devices[at.dev]
	rec := ContainerGPU{
		Namespace:       pod.Namespace,
		Pod:             pod.Name,
		Container:       container,
		GPU:             dev.Index,
		UUID:            dev.UUID,
		Model:           dev.Model,
		GPUInstance:     -1,
		Resource:        d.Resource,
		Utilization:     gpu.NA,
		MemoryUsedBytes: gpu.NA,
	}
	if at.inst >= 0 {
		in := &dev.Instances[at.inst]
		rec.GPUInstance = in.GPUInstanceID
		rec.MIGUUID = in.UUID
		rec.MIGProfile = in.Profile
		if rec.MIGProfile == "" {
			rec.MIGProfile = d.Ref.MIGProfile
		}
	}
	return rec
}
