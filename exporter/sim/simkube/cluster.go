package simkube

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/vocab"
)

// Cluster is the API server's view of one simulated node: the node (with
// GPU Feature Discovery labels), its running pods and, on a DRA node, the
// GPU driver's ResourceSlice, kept in step with the
// simulator by Sync. It serves the pods to the real pod informer as a
// cache.ListerWatcher, in memory: client-go's fake clientset would do the
// same, but it links every API group's typed client into the exporter. Its
// objects are the pod informer's own cut-down API types, which hold what
// the informer reads of a pod; a real API server's full pods decode into
// the same types.
type Cluster struct {
	node  *podindex.APINode
	slice *sliceindex.APIResourceSlice // nil unless DRA

	mu       sync.Mutex
	rv       uint64                      // resource version of the last change
	state    map[string]sim.PodState     // namespace/name -> state
	pods     map[string]*podindex.APIPod // namespace/name -> object
	watchers map[*podWatch]struct{}
}

var _ cache.ListerWatcher = (*Cluster)(nil)

// NewCluster registers the node described by n.
func NewCluster(_ context.Context, n *sim.NodeSim) (*Cluster, error) {
	return &Cluster{node: nodeObject(n), slice: ResourceSlice(n), rv: 1, state: map[string]sim.PodState{},
		pods: map[string]*podindex.APIPod{}, watchers: map[*podWatch]struct{}{}}, nil
}

// Node is the node object, as the API server would return it.
func (c *Cluster) Node() *podindex.APINode { return c.node.DeepCopyObject().(*podindex.APINode) }

// SharingStrategy is what GPU Feature Discovery would label the node with
// (nvidia.com/gpu.sharing-strategy): mps when any GPU runs MPS, else
// time-slicing when any GPU is time-sliced, else none.
func SharingStrategy(devs []sim.DeviceInfo) vocab.Sharing {
	strategy := sim.ModeNone
	for _, d := range devs {
		switch d.Sharing {
		case sim.ModeMPS:
			return sim.ModeMPS
		case sim.ModeTimeSlicing:
			strategy = sim.ModeTimeSlicing
		}
	}
	return strategy
}

// nodeObject is the node with GPU Feature Discovery's labels, the only part
// of it the exporter reads.
func nodeObject(n *sim.NodeSim) *podindex.APINode {
	devs := n.Devices()
	labels := map[string]string{
		vocab.LabelGPUPresent:      "true",
		vocab.LabelGPUCount:        fmt.Sprint(len(devs)),
		vocab.LabelSharingStrategy: string(SharingStrategy(devs)),
		vocab.LabelMIGStrategy:     "mixed",
	}
	if len(devs) > 0 {
		labels[vocab.LabelGPUProduct] = sanitizeLabel(devs[0].Model)
	}
	return &podindex.APINode{ObjectMeta: metav1.ObjectMeta{Name: n.Node().Name, Labels: labels}}
}

// sanitizeLabel turns "NVIDIA H100 80GB HBM3" into GFD's label form
// "NVIDIA-H100-80GB-HBM3".
func sanitizeLabel(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == ' ' {
			b[i] = '-'
		}
	}
	return string(b)
}

func podObject(node string, p sim.PodState) *podindex.APIPod {
	return &podindex.APIPod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: p.Namespace, Name: p.Name, UID: types.UID(p.UID),
			CreationTimestamp: metav1.NewTime(p.StartedAt),
		},
		Spec: podindex.APIPodSpec{NodeName: node},
		Status: podindex.APIPodStatus{
			Phase: podindex.PodRunning,
			ContainerStatuses: []podindex.APIContainerStatus{{
				Name: p.Container, ContainerID: "containerd://" + p.ContainerID,
			}},
		},
	}
}

// Sync creates the pods that started and deletes those that ended, and
// tells the watchers.
func (c *Cluster) Sync(_ context.Context, pods []sim.PodState) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := map[string]bool{}
	for _, p := range pods {
		key := p.Namespace + "/" + p.Name
		live[key] = true
		if old, ok := c.state[key]; ok {
			if old.UID == p.UID {
				continue
			}
			c.deleteLocked(key) // the same name, a new pod
		}
		c.rv++
		obj := podObject(c.node.Name, p)
		obj.ResourceVersion = strconv.FormatUint(c.rv, 10)
		c.state[key], c.pods[key] = p, obj
		c.notifyLocked(watch.Added, obj)
	}
	for key := range c.state {
		if !live[key] {
			c.deleteLocked(key)
		}
	}
	return nil
}

func (c *Cluster) deleteLocked(key string) {
	c.rv++
	obj := c.pods[key].DeepCopy()
	obj.ResourceVersion = strconv.FormatUint(c.rv, 10)
	delete(c.state, key)
	delete(c.pods, key)
	c.notifyLocked(watch.Deleted, obj)
}

// List implements cache.Lister: the pods that match the field selector
// (spec.nodeName, metadata.name, metadata.namespace), at the current
// resource version.
func (c *Cluster) List(opts metav1.ListOptions) (runtime.Object, error) {
	sel, err := fieldSelector(opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	list := &podindex.APIPodList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(c.rv, 10)}}
	for _, p := range c.pods {
		if sel.Matches(podFields(p)) {
			list.Items = append(list.Items, *p.DeepCopy())
		}
	}
	return list, nil
}

// Watch implements cache.Watcher. A watch starts at the current resource
// version; one from an older version is refused as expired, as an API
// server does once its history is gone, and the informer lists again.
func (c *Cluster) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	sel, err := fieldSelector(opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if rv := strconv.FormatUint(c.rv, 10); opts.ResourceVersion != "" && opts.ResourceVersion != rv {
		return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %s (%s)", opts.ResourceVersion, rv))
	}
	w := &podWatch{c: c, sel: sel, ch: make(chan watch.Event, watchBuffer)}
	c.watchers[w] = struct{}{}
	return w, nil
}

// IsWatchListSemanticsUnSupported tells the reflector to list and then
// watch, rather than to ask for the initial list as watch events, which
// this stand-in does not serve.
func (c *Cluster) IsWatchListSemanticsUnSupported() bool { return true }

// watchBuffer bounds the events a watcher may fall behind by; one that
// falls further behind is closed and lists again, as an API server drops
// a slow watcher.
const watchBuffer = 1024

func (c *Cluster) notifyLocked(t watch.EventType, p *podindex.APIPod) {
	f := podFields(p)
	for w := range c.watchers {
		if !w.sel.Matches(f) {
			continue
		}
		select {
		case w.ch <- watch.Event{Type: t, Object: p}:
		default:
			w.stopLocked()
		}
	}
}

type podWatch struct {
	c   *Cluster
	sel fields.Selector
	ch  chan watch.Event
}

func (w *podWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *podWatch) Stop() {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.stopLocked()
}

func (w *podWatch) stopLocked() {
	if _, ok := w.c.watchers[w]; ok {
		delete(w.c.watchers, w)
		close(w.ch)
	}
}

func fieldSelector(opts metav1.ListOptions) (fields.Selector, error) {
	if opts.FieldSelector == "" {
		return fields.Everything(), nil
	}
	sel, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	return sel, nil
}

func podFields(p *podindex.APIPod) fields.Set {
	return fields.Set{"metadata.name": p.Name, "metadata.namespace": p.Namespace, "spec.nodeName": p.Spec.NodeName}
}
