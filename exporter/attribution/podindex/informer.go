package podindex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// Informer is an Index fed by a pod informer restricted to one node, so the
// API server sends only the pods of this node (about a hundred) rather than
// the cluster's.
//
// It is built on a bare shared informer over a cache.ListerWatcher rather
// than on client-go's informer factory: the factory and the typed clientset
// import every API group and its typed client, listers and apply
// configurations, which made up most of the exporter's binary.
type Informer struct {
	node   string
	log    *slog.Logger
	inf    cache.SharedIndexInformer
	pods   *table
	synced func() bool
}

var _ Index = (*Informer)(nil)

// New prepares an index of the pods bound to node, listed and watched
// through lw (NodePods for an API server); nothing is fetched until Run.
// resync is the informer's resync period (0 disables resync; the watch
// alone keeps the index current).
func New(lw cache.ListerWatcher, node string, resync time.Duration, logger *slog.Logger) *Informer {
	if logger == nil {
		logger = slog.Default()
	}
	i := &Informer{
		node: node,
		log:  logger.With("component", "podindex", "node", node),
		pods: newTable(),
	}
	inf := cache.NewSharedIndexInformer(lw, &APIPod{}, resync, cache.Indexers{})
	i.inf = inf

	// These fail only once the informer has started, and it has not: it is
	// private to this Informer.
	_ = inf.SetTransform(strip)
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) { i.watchError(err) })
	reg, _ := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    i.upsert,
		UpdateFunc: func(_, obj any) { i.upsert(obj) },
		DeleteFunc: i.delete,
	})
	// The registration, unlike the informer, is synced only once the
	// handler has seen the initial list, that is once the table is full.
	i.synced = reg.HasSynced
	return i
}

// Run starts the informer and returns once the index has synced or ctx is
// done. The informer keeps watching until ctx is done.
func (i *Informer) Run(ctx context.Context) {
	go i.inf.RunWithContext(ctx)
	start := time.Now()
	if !cache.WaitForCacheSync(ctx.Done(), i.synced) {
		i.log.Warn("pod index stopped before it synced")
		return
	}
	i.log.Info("pod index synced", "pods", i.pods.len(), "duration", time.Since(start))
}

// ByUID implements Index.
func (i *Informer) ByUID(uid string) (Pod, bool) { return i.pods.ByUID(uid) }

// ByName implements Index.
func (i *Informer) ByName(namespace, name string) (Pod, bool) { return i.pods.ByName(namespace, name) }

// Synced implements Index.
func (i *Informer) Synced() bool { return i.synced() }

func (i *Informer) upsert(obj any) {
	p, ok := obj.(*APIPod)
	if !ok {
		i.log.Warn("pod informer delivered an unexpected object", "type", fmt.Sprintf("%T", obj))
		return
	}
	// The field selector already restricts the watch; this guards against
	// servers (and fakes) that ignore it.
	if p.Spec.NodeName != i.node {
		return
	}
	i.pods.put(fromAPI(p))
}

func (i *Informer) delete(obj any) {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	p, ok := obj.(*APIPod)
	if !ok {
		i.log.Warn("pod informer delivered an unexpected deletion", "type", fmt.Sprintf("%T", obj))
		return
	}
	i.pods.remove(p.Namespace, p.Name, string(p.UID))
}

// watchError replaces client-go's default handler, which logs through klog,
// keeping its levels: expired resource versions and closed watches are
// routine, anything else is worth a warning.
func (i *Informer) watchError(err error) {
	switch {
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err), errors.Is(err, io.EOF):
		i.log.Debug("pod watch closed", "err", err)
	default:
		i.log.Warn("pod watch failed; retrying", "err", err)
	}
}

// strip keeps only the fields the index reads, so the informer cache of a
// node's pods costs kilobytes: the decoder has already left out the specs,
// and this drops managed fields, owner references and annotations.
func strip(obj any) (any, error) {
	p, ok := obj.(*APIPod)
	if !ok {
		return obj, nil
	}
	out := &APIPod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            p.Name,
			Namespace:       p.Namespace,
			UID:             p.UID,
			ResourceVersion: p.ResourceVersion,
			Labels:          p.Labels,
		},
		Spec:   p.Spec,
		Status: p.Status,
	}
	if hash, ok := p.Annotations[MirrorPodAnnotation]; ok {
		out.Annotations = map[string]string{MirrorPodAnnotation: hash}
	}
	return out, nil
}
