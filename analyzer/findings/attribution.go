package findings

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

// copied says whether the exporter gave every tenant of the GPU the
// device's own figures (fleet.AttributionCopies), so that which tenant
// used the GPU is not known. Decided per GPU from the data, not by
// exporter: dcgm-exporter's 2025 per-process series are each tenant's own.
func (d *detector) copied(node, uuid string) bool {
	g, ok := d.gpus[fleet.GPUKey{Node: node, UUID: uuid}]
	return ok && g.Attribution == fleet.AttributionCopies
}

// deviceFigures says whether the GPU's one tenant series carries the
// device's figures rather than that tenant's own: copies, or a GPU the
// cluster says is shared whose data shows one tenant (clusterShared).
func (d *detector) deviceFigures(k fleet.GPUKey) bool {
	_, shared := d.clusterShared[k]
	return shared || d.copied(k.Node, k.UUID)
}

// deviceFiguresAny says whether any GPU of the workload reports the
// device's figures for its tenants.
func (d *detector) deviceFiguresAny(w fleet.Workload) bool {
	for _, g := range w.GPUs {
		if d.deviceFigures(g) {
			return true
		}
	}
	return false
}

// readClusterSharing finds the GPUs whose data cannot say they are shared
// and the cluster says are. Where the exporter shows at most one tenant
// per device (fleet.AttributionOneTenant: dcgm-exporter without
// --kubernetes-virtual-gpus), a time-sliced or MPS GPU reads as held
// whole by one arbitrary tenant; the device plugin's config and GPU
// Feature Discovery's labels say how the node's whole GPUs are shared.
// MIG GPUs say so in their data and are left alone, as are GPUs held
// through a DRA ResourceClaim: the device plugin's config does not share
// them, and dcgm-exporter labels a copy for every pod of a claim, so one
// tenant seen is one tenant. Without cluster access, the kinds that need
// the sharing mode are said to be skipped on such GPUs.
func (d *detector) readClusterSharing() {
	d.clusterShared = map[fleet.GPUKey]inventory.NodeSharing{}
	dra := map[fleet.GPUKey]bool{}
	for _, x := range d.res.Allocations {
		if x.AllocationPath == vocab.AllocationPathDRA {
			dra[fleet.GPUKey{Node: x.Node, UUID: x.UUID}] = true
		}
	}
	unseen, unknownNode := 0, 0
	for _, g := range d.res.GPUs {
		if g.Attribution != fleet.AttributionOneTenant || g.Sharing != vocab.SharingNone || dra[g.GPUKey] {
			continue
		}
		unseen++
		if ns, ok := d.inv.SharedGPUs(g.Node); ok {
			d.clusterShared[g.GPUKey] = ns
		} else if d.haveInventory() {
			if _, known := d.inv.Nodes[g.Node]; !known {
				unknownNode++
			}
		}
	}
	switch {
	case unseen > 0 && !d.haveInventory():
		// One pod per device is every GPU one pod holds alone, under any
		// layout: the flag is named as why a shared GPU would read so,
		// not as the install's (the data of --kubernetes-virtual-gpus
		// shows it too).
		d.skip(fmt.Sprintf("%d GPUs show at most one pod per device, "+
			"so a time-sliced or MPS GPU among them (dcgm-exporter without --kubernetes-virtual-gpus names one of its tenants) cannot be told from a whole one; needs cluster access (GPU Feature Discovery's node labels or the device plugin's config) to tell", unseen),
			vocab.KindTimesliceOOMRisk, vocab.KindTrainingOnShared)
	case unknownNode > 0:
		// dcgm-exporter's Hostname is not always the node's name.
		d.skip(fmt.Sprintf("%d GPUs show at most one pod per device and are on nodes the cluster does not list by that name, "+
			"so whether they are time-sliced or MPS is not known", unknownNode),
			vocab.KindTimesliceOOMRisk, vocab.KindTrainingOnShared)
	}
}

// sharingOf is the GPU's sharing mode: the data's, or the cluster's where
// the data cannot tell (readClusterSharing).
func (d *detector) sharingOf(g fleet.GPU) (vocab.Sharing, inventory.NodeSharing, bool) {
	if ns, ok := d.clusterShared[g.GPUKey]; ok {
		return ns.Strategy, ns, true
	}
	return g.Sharing, inventory.NodeSharing{}, false
}

// withClusterSharing is w as the cluster says it is shared, where every
// GPU it held is one the data shows held whole (readClusterSharing): its
// share is one replica of the GPU, and its figures are the device's.
func (d *detector) withClusterSharing(w fleet.Workload) (fleet.Workload, inventory.NodeSharing, bool) {
	if w.Sharing != vocab.SharingNone || len(w.GPUs) == 0 {
		return w, inventory.NodeSharing{}, false
	}
	var ns inventory.NodeSharing
	for i, g := range w.GPUs {
		s, ok := d.clusterShared[g]
		if !ok || (i > 0 && (s.Strategy != ns.Strategy || s.Replicas != ns.Replicas)) {
			return w, inventory.NodeSharing{}, false
		}
		if i == 0 {
			ns = s
		}
	}
	w.Sharing = ns.Strategy
	if ns.Replicas > 0 {
		w.Share = 1 / float64(ns.Replicas)
	}
	return w, ns, true
}
