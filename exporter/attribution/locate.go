package attribution

import (
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
)

// loc is a device of the snapshot: Devices[dev], and Instances[inst] of it
// for a MIG instance or -1 for the whole GPU.
type loc struct{ dev, inst int }

// layoutEntry is one device or instance in snapshot order; equal layouts
// mean equal positions, so the maps of a locator can be reused.
type layoutEntry struct {
	uuid string
	a, b int // device: Index, -1; instance: GPUInstanceID, ComputeInstanceID
}

// locator finds the snapshot device a kubelet device ID names. Its maps are
// rebuilt only when the node's devices or MIG layout change, which happens
// on MIG reconfiguration and GPU loss, not on every sample.
type locator struct {
	layout  []layoutEntry
	byUUID  map[string]loc // GPU-… and MIG-… UUIDs
	byIndex map[int]int    // NVML index → position in Devices
}

// update makes the maps describe snap, rebuilding them only if needed. It
// reports whether it rebuilt them.
func (l *locator) update(snap *gpu.Snapshot) bool {
	if l.byUUID != nil && l.sameLayout(snap) {
		return false
	}
	l.layout = l.layout[:0]
	l.byUUID = make(map[string]loc, len(l.byUUID))
	l.byIndex = make(map[int]int, len(snap.Devices))
	for d := range snap.Devices {
		dev := &snap.Devices[d]
		l.layout = append(l.layout, layoutEntry{dev.UUID, dev.Index, -1})
		l.byUUID[dev.UUID] = loc{d, -1}
		l.byIndex[dev.Index] = d
		for i := range dev.Instances {
			in := &dev.Instances[i]
			l.layout = append(l.layout, layoutEntry{in.UUID, in.GPUInstanceID, in.ComputeInstanceID})
			if in.UUID != "" {
				l.byUUID[in.UUID] = loc{d, i}
			}
		}
	}
	return true
}

func (l *locator) sameLayout(snap *gpu.Snapshot) bool {
	k := 0
	for d := range snap.Devices {
		dev := &snap.Devices[d]
		if k >= len(l.layout) || l.layout[k] != (layoutEntry{dev.UUID, dev.Index, -1}) {
			return false
		}
		k++
		for i := range dev.Instances {
			in := &dev.Instances[i]
			if k >= len(l.layout) || l.layout[k] != (layoutEntry{in.UUID, in.GPUInstanceID, in.ComputeInstanceID}) {
				return false
			}
			k++
		}
	}
	return k == len(l.layout)
}

// locate maps a device ID to the snapshot. A MIG ID whose instance the
// snapshot does not list (a down GPU lists none) is not found.
func (l *locator) locate(snap *gpu.Snapshot, ref podresources.DeviceRef) (loc, bool) {
	switch ref.Kind {
	case podresources.KindUUID:
		if at, ok := l.byUUID[ref.UUID]; ok {
			return at, true
		}
		// Legacy MIG-GPU-<uuid>/<gi>/<ci> of drivers before R470, where
		// current drivers report a MIG-<uuid> for the same instance.
		if ref.ParentUUID == "" {
			return loc{}, false
		}
		parent, ok := l.byUUID[ref.ParentUUID]
		if !ok || parent.inst >= 0 {
			return loc{}, false
		}
		return findInstance(snap, parent.dev, ref.GPUInstance, ref.ComputeInstance)
	case podresources.KindIndex:
		d, ok := l.byIndex[ref.Index]
		if !ok {
			return loc{}, false
		}
		if ref.MIGIndex < 0 {
			return loc{d, -1}, true
		}
		for i, in := range snap.Devices[d].Instances {
			if in.Index == ref.MIGIndex {
				return loc{d, i}, true
			}
		}
		return loc{}, false
	case podresources.KindGKE:
		d, ok := l.byIndex[ref.Index]
		if !ok {
			return loc{}, false
		}
		if ref.GPUInstance < 0 {
			return loc{d, -1}, true
		}
		// GKE creates one compute instance per GPU instance.
		return findInstance(snap, d, ref.GPUInstance, -1)
	default:
		return loc{}, false
	}
}

// findInstance finds the MIG instance gi/ci of Devices[d]; ci < 0 matches
// any compute instance.
func findInstance(snap *gpu.Snapshot, d, gi, ci int) (loc, bool) {
	for i, in := range snap.Devices[d].Instances {
		if in.GPUInstanceID == gi && (ci < 0 || in.ComputeInstanceID == ci) {
			return loc{d, i}, true
		}
	}
	return loc{}, false
}
