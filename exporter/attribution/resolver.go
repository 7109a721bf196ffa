package attribution

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// Resolver attributes GPUs to containers pass after pass, remembering what
// does not change between samples: the container of each GPU process and the
// lookup from device IDs to the snapshot's devices. The zero value is ready
// to use; it is safe for concurrent use, though passes are serialised.
type Resolver struct {
	mu   sync.Mutex
	pids pidCache
	loc  locator
}

// Attribute runs one pass without any memory of earlier passes.
func Attribute(in Input) ([]ContainerGPU, Stats) {
	var r Resolver
	return r.Attribute(in)
}

// Attribute returns one record per container and physical GPU or MIG
// instance it holds, sorted by namespace, pod, container, GPU UUID and GPU
// instance.
func (r *Resolver) Attribute(in Input) ([]ContainerGPU, Stats) {
	r.mu.Lock()
	defer r.mu.Unlock()

	st := Stats{Mode: mode(in)}
	r.pids.begin(in.ProcRoot)
	// Runs even when nothing is attributed, so that a kubelet outage or an
	// empty node also empties the cache.
	defer r.pids.end()

	if in.Allocations == nil {
		return nil, st
	}
	snap := in.Snapshot
	if snap == nil {
		snap = &gpu.Snapshot{}
	}
	r.loc.update(snap)

	p := pass{in: in, snap: snap, stats: &st, pids: &r.pids, loc: &r.loc}
	p.collect()
	p.allocate()
	p.measure()
	return p.emit(), st
}

// mode decides once per pass whether processes can be attributed: that
// needs the host's /proc and a pod index that has seen every pod, since
// before its first sync a miss would turn a busy container into an idle one.
func mode(in Input) string {
	if in.ProcRoot == "" || in.Pods == nil || !in.Pods.Synced() {
		return ModeAllocationOnly
	}
	// PID 1 always exists in a readable procfs; one stat tells a missing or
	// unmounted hostPath apart without reading every process.
	if _, err := os.Stat(filepath.Join(in.ProcRoot, "1")); err != nil {
		return ModeAllocationOnly
	}
	return ModeProcess
}

func (p *pass) emit() []ContainerGPU {
	n := 0
	for _, g := range p.groups {
		n += len(g.tenants)
	}
	out := make([]ContainerGPU, 0, n)
	for _, g := range p.groups {
		for _, t := range g.tenants {
			out = append(out, t.rec)
		}
	}
	slices.SortFunc(out, func(a, b ContainerGPU) int {
		return cmp.Or(
			cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Pod, b.Pod),
			cmp.Compare(a.Container, b.Container),
			cmp.Compare(a.UUID, b.UUID),
			cmp.Compare(a.GPUInstance, b.GPUInstance),
			cmp.Compare(a.MIGUUID, b.MIGUUID),
		)
	})
	return out
}
