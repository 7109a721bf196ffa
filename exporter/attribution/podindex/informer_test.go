package podindex

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

const node = "gpu-node-1"

func apiPod(name, uid, nodeName string, phase corev1.PodPhase, containers ...corev1.ContainerStatus) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID(uid), Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{NodeName: nodeName},
		Status:     corev1.PodStatus{Phase: phase, ContainerStatuses: containers},
	}
}

// startInformer runs an index over client and returns once it has synced.
func startInformer(t *testing.T, lw cache.ListerWatcher) *Informer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	idx := New(lw, node, 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if idx.Synced() {
		t.Fatal("synced before Run")
	}
	done := make(chan struct{})
	go func() { idx.Run(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after sync")
	}
	if !idx.Synced() {
		t.Fatal("Run returned unsynced")
	}
	return idx
}

// eventually polls cond, since informer events arrive asynchronously.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestInformerOverHTTP runs the production path, NewClient and NodePods,
// against an HTTP API server: the list and the watch carry the node's field
// selector, and the listed pod is indexed.
func TestInformerOverHTTP(t *testing.T) {
	var mu sync.Mutex
	var selectors []string
	pod := apiPod("train", "6f1c2a4e-8b3d-4e5f-9a7b-0c1d2e3f4a5b", node, corev1.PodRunning,
		corev1.ContainerStatus{Name: "main", ContainerID: "containerd://" + idA})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/pods":
			mu.Lock()
			selectors = append(selectors, r.URL.Query().Get("fieldSelector"))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Query().Get("watch") == "true" {
				// client-go's reflector asks for the initial list as
				// watch events, ended by a bookmark (WatchList).
				if r.URL.Query().Get("sendInitialEvents") == "true" {
					enc := json.NewEncoder(w)
					_ = enc.Encode(map[string]any{"type": "ADDED", "object": withKind(pod)})
					end := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7",
						Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
					_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": withKind(end)})
				}
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				return
			}
			_ = json.NewEncoder(w).Encode(corev1.PodList{
				TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
				ListMeta: metav1.ListMeta{ResourceVersion: "7"}, Items: []corev1.Pod{*pod}})
		case "/api/v1/nodes/" + node:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(corev1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"},
				ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"nvidia.com/gpu.sharing-strategy": "mps"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	// Closed after the informer's cleanup has stopped its watch, which
	// the server would otherwise wait for.
	t.Cleanup(srv.Close)
	client, err := NewClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	idx := startInformer(t, NodePods(client, node))
	if p, ok := idx.ByUID(string(pod.UID)); !ok || p.Containers[idA] != "main" {
		t.Errorf("ByUID = %+v, %v", p, ok)
	}
	mu.Lock()
	if len(selectors) == 0 {
		t.Error("no request reached the API server")
	}
	for _, s := range selectors {
		if s != "spec.nodeName="+node {
			t.Errorf("field selector %q, want spec.nodeName=%s", s, node)
		}
	}
	mu.Unlock()
	labels, err := NodeLabels(context.Background(), client, node)
	if err != nil || labels["nvidia.com/gpu.sharing-strategy"] != "mps" {
		t.Errorf("NodeLabels = %v, %v", labels, err)
	}
}

func withKind(p *corev1.Pod) *corev1.Pod {
	p = p.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
	return p
}

// fakePods lists and watches a fake clientset's pods, each sent through
// the wire into the informer's APIPod (decodeAPI). The fake ignores field
// selectors, which exercises the informer's own node check; it does not
// serve the initial list as watch events, and says so.
func fakePods(t *testing.T, client *fake.Clientset) cache.ListerWatcher {
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			l, err := client.CoreV1().Pods("").List(ctx, o)
			if err != nil {
				return nil, err
			}
			return decodeAPI(t, l), nil
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := client.CoreV1().Pods("").Watch(ctx, o)
			if err != nil {
				return nil, err
			}
			return watch.Filter(w, func(e watch.Event) (watch.Event, bool) {
				if p, ok := e.Object.(*corev1.Pod); ok {
					e.Object = decodeAPI(t, p)
				}
				return e, true
			}), nil
		},
	}, client)
}

func TestInformerFollowsPodLifecycle(t *testing.T) {
	const (
		uidTrain  = "6f1c2a4e-8b3d-4e5f-9a7b-0c1d2e3f4a5b"
		uidOther  = "7a2b3c4d-5e6f-4a1b-8c9d-0e1f2a3b4c5d"
		uidInfer  = "8b3c4d5e-6f7a-4b2c-9d0e-1f2a3b4c5d6e"
		uidInfer2 = "9c4d5e6f-7a8b-4c3d-8e1f-2a3b4c5d6e7f"
		hash      = "0123456789abcdef0123456789abcdef"
	)
	mirror := apiPod("etcd", "5d6e7f8a-9b0c-4d1e-8f2a-3b4c5d6e7f80", node, corev1.PodRunning)
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: hash}
	client := fake.NewClientset(
		apiPod("train", uidTrain, node, corev1.PodRunning, corev1.ContainerStatus{Name: "main", ContainerID: "containerd://" + idA}),
		apiPod("elsewhere", uidOther, "gpu-node-2", corev1.PodRunning),
		mirror,
	)
	idx := startInformer(t, fakePods(t, client))
	pods := client.CoreV1().Pods("ml")
	ctx := context.Background()

	// Initial list.
	if p, ok := idx.ByUID(uidTrain); !ok || p.Name != "train" || p.Containers[idA] != "main" || p.Labels["app"] != "train" {
		t.Errorf("ByUID(train) = %+v, %v", p, ok)
	}
	if _, ok := idx.ByUID(uidOther); ok {
		t.Error("pod of another node indexed")
	}
	if p, ok := idx.ByUID(hash); !ok || p.Name != "etcd" {
		t.Errorf("static pod not found by its config hash: %+v, %v", p, ok)
	}

	// A pod of another node created later is ignored too.
	if _, err := pods.Create(ctx, apiPod("elsewhere-2", uidInfer2, "gpu-node-2", corev1.PodRunning), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Added while pending: known by name, no containers yet.
	if _, err := pods.Create(ctx, apiPod("infer", uidInfer, node, corev1.PodPending), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "pending pod", func() bool { _, ok := idx.ByName("ml", "infer"); return ok })
	if p, _ := idx.ByName("ml", "infer"); len(p.Containers) != 0 || p.Phase != PodPending {
		t.Errorf("pending pod = %+v", p)
	}

	// Its container starts: the ID appears.
	started := apiPod("infer", uidInfer, node, corev1.PodRunning, corev1.ContainerStatus{Name: "server", ContainerID: "containerd://" + idB})
	if _, err := pods.UpdateStatus(ctx, started, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "container ID", func() bool { p, _ := idx.ByUID(uidInfer); return p.Containers[idB] == "server" })

	// The training pod finishes: still indexed, with its phase.
	done := apiPod("train", uidTrain, node, corev1.PodSucceeded, corev1.ContainerStatus{Name: "main", ContainerID: "containerd://" + idA})
	if _, err := pods.UpdateStatus(ctx, done, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "phase change", func() bool { p, _ := idx.ByUID(uidTrain); return p.Finished() })

	// Deleted: gone under both keys.
	if err := pods.Delete(ctx, "train", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deletion", func() bool { _, ok := idx.ByName("ml", "train"); return !ok })
	if _, ok := idx.ByUID(uidTrain); ok {
		t.Error("deleted pod still found by UID")
	}

	// Recreated under the same name with a new UID: the old UID stays gone.
	if _, err := pods.Create(ctx, apiPod("train", uidInfer2, node, corev1.PodRunning), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "recreated pod", func() bool { _, ok := idx.ByUID(uidInfer2); return ok })
	if _, ok := idx.ByUID(uidTrain); ok {
		t.Error("predecessor UID resolves after recreation")
	}
	if _, ok := idx.ByUID(uidOther); ok || idx.pods.len() != 3 {
		t.Errorf("index holds %d pods, want 3 (train, infer, etcd)", idx.pods.len())
	}
}

func TestInformerDeleteTombstone(t *testing.T) {
	idx := New(fakePods(t, fake.NewClientset()), node, 0, nil)
	idx.upsert(decodeAPI(t, apiPod("a", "uid-new", node, corev1.PodRunning)))
	// A tombstone for a predecessor with the same name must not remove it.
	idx.delete(cacheTombstone(decodeAPI(t, apiPod("a", "uid-old", node, corev1.PodRunning)).(*APIPod)))
	if _, ok := idx.ByName("ml", "a"); !ok {
		t.Fatal("stale tombstone deleted the current pod")
	}
	idx.delete(cacheTombstone(decodeAPI(t, apiPod("a", "uid-new", node, corev1.PodRunning)).(*APIPod)))
	if _, ok := idx.ByName("ml", "a"); ok {
		t.Fatal("tombstone did not delete the pod")
	}
	idx.delete("garbage") // logged, not a panic
}

func cacheTombstone(p *APIPod) cache.DeletedFinalStateUnknown {
	return cache.DeletedFinalStateUnknown{Key: p.Namespace + "/" + p.Name, Obj: p}
}
