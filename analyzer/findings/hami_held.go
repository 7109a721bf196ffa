package findings

import (
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// The exporters may map no pod to a GPU HAMi shares: HAMi's device
// plugin hands the kubelet device IDs "<UUID>-<n>" (Project-HAMi/HAMi
// pkg/device-plugin/nvidiadevice/nvinternal/rm/devices.go:209 at
// 4707fb02), which neither the NVIDIA plugin's UUIDs nor its "::"
// replicas spell (gpulens-exporter reads them since issue 53; an older
// one, or dcgm-exporter, may not). HAMi's own series still name the GPU's tenants
// (fleet.Result.HAMi, read before the findings): such a GPU is held by
// them, not free capacity, and its use is not a stranger's.

// hamiGPU is a GPU as a HAMi tenant names it: its cluster and UUID (the
// tenant's node is the exporter's, and may be unknown).
type hamiGPU struct{ cluster, uuid string }

// hamiTenants are the HAMi tenants on g.
func (d *detector) hamiTenants(g fleet.GPU) []HAMiTenant {
	if d.res == nil || len(d.res.HAMi) == 0 {
		return nil
	}
	if d.hami == nil {
		d.hami = map[hamiGPU][]HAMiTenant{}
		for _, t := range d.res.HAMi {
			k := hamiGPU{t.Cluster, t.GPUUUID}
			d.hami[k] = append(d.hami[k], t)
		}
	}
	return d.hami[hamiGPU{g.Cluster, g.UUID}]
}

// freeHours is the part of the time g reported that no tenant held it:
// the exporter's unallocated hours, less the time HAMi's series show a
// tenant on it. HAMi's are window figures: its longest-read tenant held
// the GPU for at least its coverage of the time.
func (d *detector) freeHours(g fleet.GPU) float64 {
	free := g.UnallocatedHours
	for _, t := range d.hamiTenants(g) {
		free = min(free, max(0, g.ReportedHours*(1-t.Coverage)))
	}
	return free
}

// hamiHeldNow adds to held and holders (nodeUse's: the GPUs held now,
// and by which workloads, by node) the GPUs the exporter saw no
// allocation on in the whole window and HAMi names tenants on: their
// tenants, each holding a share. HAMi's series are window figures, so a
// tenant is taken to hold its GPU now; where the exporter saw tenants,
// its reading of who holds the GPU now stands.
func (d *detector) hamiHeldNow(held map[string]map[fleet.GPUKey]bool, holders map[string]map[workload.Ref]*holding) {
	if d.res == nil || len(d.res.HAMi) == 0 {
		return
	}
	seen := map[hamiGPU]bool{}
	for _, a := range d.res.Allocations {
		seen[hamiGPU{a.Cluster, a.UUID}] = true
	}
	for _, t := range d.res.HAMi {
		if t.Node == "" || seen[hamiGPU{t.Cluster, t.GPUUUID}] {
			continue
		}
		k := fleet.GPUKey{Cluster: t.Cluster, Node: t.Node, UUID: t.GPUUUID}
		if held[t.Node] == nil {
			held[t.Node], holders[t.Node] = map[fleet.GPUKey]bool{}, map[workload.Ref]*holding{}
		}
		held[t.Node][k] = true
		w, _ := d.podOwner(fleet.Allocation{AllocationKey: fleet.AllocationKey{Cluster: t.Cluster, Node: t.Node, Namespace: t.Namespace,
			Pod: t.Pod, Container: t.Container, UUID: t.GPUUUID}})
		w.Container = ""
		h := holders[t.Node][w]
		if h == nil {
			h = &holding{whole: map[fleet.GPUKey]bool{}, shared: map[fleet.GPUKey]bool{}}
			holders[t.Node][w] = h
		}
		h.shared[k] = true
	}
}
