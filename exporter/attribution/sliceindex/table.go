package sliceindex

import (
	"sync"

	"github.com/gpulens/gpulens/exporter/podresources"
)

// table holds the node's slices and the devices they publish. A node has
// a few slices of a few dozen devices, so the device map is rebuilt whole
// on every change rather than patched.
type table struct {
	mu      sync.RWMutex
	slices  map[string]*APIResourceSlice // by slice name
	devices map[podresources.DRADevice]Device
}

func newTable() *table {
	return &table{slices: map[string]*APIResourceSlice{}, devices: map[podresources.DRADevice]Device{}}
}

func (t *table) put(s *APIResourceSlice) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.slices[s.Name] = s
	t.rebuildLocked()
}

func (t *table) remove(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.slices, name)
	t.rebuildLocked()
}

// rebuildLocked publishes the devices of each pool's newest generation:
// while a driver republishes a pool, slices of the old and the new
// generation coexist, and the old ones may list devices that are gone (a
// MIG device deleted on demand).
func (t *table) rebuildLocked() {
	type poolKey struct{ driver, pool string }
	newest := map[poolKey]int64{}
	for _, s := range t.slices {
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		if g, ok := newest[k]; !ok || s.Spec.Pool.Generation > g {
			newest[k] = s.Spec.Pool.Generation
		}
	}
	devices := make(map[podresources.DRADevice]Device, len(t.devices))
	for _, s := range t.slices {
		if s.Spec.Pool.Generation != newest[poolKey{s.Spec.Driver, s.Spec.Pool.Name}] {
			continue
		}
		for i := range s.Spec.Devices {
			d := fromAPI(s.Spec.Driver, s.Spec.Pool.Name, &s.Spec.Devices[i])
			devices[d.DRADevice] = d
		}
	}
	t.devices = devices
}

func (t *table) lookup(k podresources.DRADevice) (Device, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	d, ok := t.devices[k]
	return d, ok
}

func (t *table) len() int {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.devices)
}
