package attribution

import (
	"slices"

	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/vocab"
)

// locateClaim finds the snapshot device a claim's device is, through the
// attributes its driver published for it.
func (p *pass) locateClaim(cl podresources.ClaimDevice) (loc, sliceindex.Device, bool) {
	if p.in.Slices == nil {
		return loc{}, sliceindex.Device{}, false
	}
	dev, ok := p.in.Slices.Lookup(cl.Key())
	if !ok {
		return loc{}, dev, false
	}
	at, ok := p.loc.locateDRA(p.snap, dev)
	return at, dev, ok
}

// locateDRA maps a ResourceSlice device to the snapshot: by its uuid (GPU-…
// or MIG-…, both NVML's), else, for a MIG device announced without one
// (the NVIDIA driver's DynamicMIG), by the only instance of its profile on
// its parent GPU. NVML's instances carry no placement to tell two
// instances of one profile apart, so such a device stays unmatched rather
// than be given another claim's instance.
func (l *locator) locateDRA(snap *gpu.Snapshot, dev sliceindex.Device) (loc, bool) {
	if dev.UUID != "" {
		at, ok := l.byUUID[dev.UUID]
		return at, ok
	}
	if dev.Type != sliceindex.TypeMIG || dev.ParentUUID == "" || dev.Profile == "" {
		return loc{}, false
	}
	parent, ok := l.byUUID[dev.ParentUUID]
	if !ok || parent.inst >= 0 {
		return loc{}, false
	}
	found, n := loc{}, 0
	for i, in := range snap.Devices[parent.dev].Instances {
		if in.Profile == dev.Profile {
			found, n = loc{parent.dev, i}, n+1
		}
	}
	return found, n == 1
}

// addClaim adds a container's hold on a claimed device: a whole device, or
// an equal part of it when several containers consume it (allocate).
func (p *pass) addClaim(at loc, pod podresources.Pod, container string, cl podresources.ClaimDevice, dev sliceindex.Device) {
	g := p.byLoc[at]
	if g == nil {
		g = &group{at: at}
		p.byLoc[at] = g
		p.groups = append(p.groups, g)
	}
	g.claimed = true
	t := g.tenant(pod.Namespace, pod.Name, container)
	if t == nil {
		// Resource names the driver; the profile backs up NVML's, as a
		// mixed-strategy resource name does for the device plugin.
		d := podresources.Device{Resource: vocab.Resource(cl.Driver), Ref: podresources.DeviceRef{
			Kind: podresources.KindUUID, UUID: dev.UUID, Index: -1, MIGIndex: -1, GPUInstance: -1,
			ComputeInstance: -1, Replica: -1, MIGProfile: dev.Profile}}
		t = &tenant{rec: p.record(at, pod, container, d)}
		g.tenants = append(g.tenants, t)
	}
	t.units++
	c := Claim{Namespace: cl.ClaimNamespace, Name: cl.ClaimName, Driver: cl.Driver, Pool: cl.Pool, Device: cl.Device}
	// A device shared through consumable capacity can reach one container
	// twice under one claim, with two share IDs: one hold.
	if !slices.Contains(t.rec.Claims, c) {
		t.rec.Claims = append(t.rec.Claims, c)
	}
}
