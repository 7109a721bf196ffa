package main

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/tools/cache"

	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/podresources"
)

// lazySlices is the ResourceSlice index, started the first time the kubelet
// reports a GPU held through a claim. Nodes without DRA (most today) then
// never list ResourceSlices: no watch on the API server, and no RBAC the
// cluster may not have granted. The cost is that the first collections
// after the first claim count its devices as unmatched until the informer
// has synced, well under a second against a healthy API server. A refused
// list does not stop the exporter: the index warns once and keeps retrying,
// so granting the RBAC later is picked up without a restart.
type lazySlices struct {
	ctx     context.Context
	node    string
	drivers []string
	lw      func(driver string) cache.ListerWatcher
	log     *slog.Logger

	once sync.Once
	idx  atomic.Pointer[sliceindex.Informer]
}

var _ sliceindex.Index = (*lazySlices)(nil)

// observe starts the index when a reading of the kubelet has claim
// devices of the GPU drivers, and returns it once started.
func (l *lazySlices) observe(a *podresources.Allocations) *sliceindex.Informer {
	if a == nil || a.ClaimDevices == 0 {
		return l.idx.Load()
	}
	l.once.Do(func() {
		l.log.Info("GPUs are allocated through ResourceClaims; reading the node's ResourceSlices", "drivers", l.drivers)
		inf := sliceindex.New(l.node, l.drivers, l.lw, l.log)
		go inf.Run(l.ctx)
		l.idx.Store(inf)
	})
	return l.idx.Load()
}

// Lookup implements sliceindex.Index: nothing resolves before the start.
func (l *lazySlices) Lookup(k podresources.DRADevice) (sliceindex.Device, bool) {
	inf := l.idx.Load()
	if inf == nil {
		return sliceindex.Device{}, false
	}
	return inf.Lookup(k)
}
