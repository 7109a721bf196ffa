package sliceindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/gpulens/gpulens/exporter/podresources"
)

// Index resolves a claim's device to what its ResourceSlice says of it.
type Index interface {
	Lookup(podresources.DRADevice) (Device, bool)
}

// Informer is an Index fed by one informer per GPU driver, each restricted
// to this node's slices of that driver. MIG devices that a driver creates
// and deletes on demand come and go in its slices; the watch follows them.
type Informer struct {
	node      string
	log       *slog.Logger
	infs      []cache.SharedIndexInformer
	synced    []cache.InformerSynced
	devices   *table
	forbidden atomic.Bool
}

var _ Index = (*Informer)(nil)

// New prepares an index of the slices of node that drivers publish, each
// listed and watched through lw(driver) (NodeSlices for an API server);
// nothing is fetched until Run.
func New(node string, drivers []string, lw func(driver string) cache.ListerWatcher, logger *slog.Logger) *Informer {
	if logger == nil {
		logger = slog.Default()
	}
	i := &Informer{
		node:    node,
		log:     logger.With("component", "sliceindex", "node", node),
		devices: newTable(),
	}
	for _, driver := range drivers {
		inf := cache.NewSharedIndexInformer(lw(driver), &APIResourceSlice{}, 0, cache.Indexers{})
		// These fail only once the informer has started, and it has not.
		_ = inf.SetTransform(strip)
		_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { i.watchError(driver, err) })
		reg, _ := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    i.upsert,
			UpdateFunc: func(_, obj any) { i.upsert(obj) },
			DeleteFunc: i.delete,
		})
		i.infs = append(i.infs, inf)
		i.synced = append(i.synced, reg.HasSynced)
	}
	return i
}

// Run starts the informers and returns once every one has synced or ctx
// is done. They keep watching until ctx is done.
func (i *Informer) Run(ctx context.Context) {
	for _, inf := range i.infs {
		go inf.RunWithContext(ctx)
	}
	start := time.Now()
	if !cache.WaitForCacheSync(ctx.Done(), i.synced...) {
		return
	}
	if i.forbidden.Load() {
		i.log.Info("ResourceSlices readable again")
	}
	i.log.Info("ResourceSlice index synced", "devices", i.devices.len(), "duration", time.Since(start))
}

// Synced reports whether every driver's slices have been listed.
func (i *Informer) Synced() bool {
	for _, s := range i.synced {
		if !s() {
			return false
		}
	}
	return true
}

// Lookup implements Index.
func (i *Informer) Lookup(k podresources.DRADevice) (Device, bool) { return i.devices.lookup(k) }

func (i *Informer) upsert(obj any) {
	s, ok := obj.(*APIResourceSlice)
	if !ok {
		i.log.Warn("ResourceSlice informer delivered an unexpected object", "type", fmt.Sprintf("%T", obj))
		return
	}
	// The field selector already restricts the watch; this guards against
	// servers (and fakes) that ignore it.
	if s.Spec.NodeName == nil || *s.Spec.NodeName != i.node {
		return
	}
	i.devices.put(s)
}

func (i *Informer) delete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	s, ok := obj.(*APIResourceSlice)
	if !ok {
		i.log.Warn("ResourceSlice informer delivered an unexpected deletion", "type", fmt.Sprintf("%T", obj))
		return
	}
	i.devices.remove(s.Name)
}

// watchError keeps client-go's levels (expired versions and closed watches
// are routine) and reports a refusal once: a cluster that never granted
// the exporter resourceslices has GPUs allocated through claims
// unattributed, which one line says, and the reflector's retries would
// otherwise repeat it every few seconds.
func (i *Informer) watchError(driver string, err error) {
	switch {
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err), errors.Is(err, io.EOF):
		i.log.Debug("ResourceSlice watch closed", "driver", driver, "err", err)
	case apierrors.IsForbidden(err):
		if i.forbidden.CompareAndSwap(false, true) {
			i.log.Warn("cannot read ResourceSlices: GPUs allocated through claims stay unattributed until the exporter may get, list and watch resource.k8s.io resourceslices",
				"driver", driver, "err", err)
			return
		}
		i.log.Debug("ResourceSlices still forbidden", "driver", driver, "err", err)
	default:
		i.log.Warn("ResourceSlice watch failed; retrying", "driver", driver, "err", err)
	}
}

// strip keeps only what the index reads, dropping managed fields, labels
// and annotations from the informer's cache.
func strip(obj any) (any, error) {
	s, ok := obj.(*APIResourceSlice)
	if !ok {
		return obj, nil
	}
	return &APIResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, UID: s.UID, ResourceVersion: s.ResourceVersion},
		Spec:       s.Spec,
	}, nil
}
