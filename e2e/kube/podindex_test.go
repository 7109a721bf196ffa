package kube

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gpulens/gpulens/exporter/attribution/podindex"
)

// startIndex runs the exporter's pod index for node and waits until it has
// synced, failing the test if it does not. Syncing alone does not prove
// the watch works: the reflector counts as synced after its first list and,
// when the watch is refused, keeps relisting, which still delivers changes
// late. A refused watch shows only in the index's warnings ("pod watch
// failed; retrying"), so the test fails on any warning the index logs.
//
// The index reads through the exporter's own core/v1 client, built from cfg.
func startIndex(t *testing.T, cfg *rest.Config, node string) *podindex.Informer {
	t.Helper()
	rc, err := podindex.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	warnings := &warnLog{}
	// Registered after cancel, so it runs before it, while the index is
	// still up and anything it logs on shutdown does not count.
	t.Cleanup(func() {
		for _, w := range warnings.all() {
			t.Errorf("the pod index of %s warned: %s", node, w)
		}
	})
	idx := podindex.New(podindex.NodePods(rc, node), node, 0, slog.New(warnings))
	runCtx, stop := context.WithTimeout(ctx, 30*time.Second)
	defer stop()
	go idx.Run(ctx)
	for !idx.Synced() {
		if runCtx.Err() != nil {
			t.Fatalf("the pod index of %s did not sync; warnings: %q", node, warnings.all())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return idx
}

// warnLog is a slog handler that keeps the messages of warnings and errors.
type warnLog struct {
	mu   sync.Mutex
	msgs []string
}

func (h *warnLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (h *warnLog) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *warnLog) WithGroup(string) slog.Handler                { return h }

func (h *warnLog) Handle(_ context.Context, r slog.Record) error {
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			msg += ": " + a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, msg)
	return nil
}

func (h *warnLog) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.msgs)
}

func gpuNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"nvidia.com/gpu.present": "true"}}}
}

func podNamed(ns, name string) *corev1.Pod {
	// Never restarted, so that the status may move to Succeeded as a
	// finished job's does.
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever},
	}
}

// TestPodIndexSeesOnlyItsNode checks that the field selector is applied by
// the server: the index of one node never holds another node's pods, and
// it resolves its own by UID and container ID.
func TestPodIndexSeesOnlyItsNode(t *testing.T) {
	cfg := adminConfig(t)
	c := clientFor(t, cfg)
	s := suffix(t)
	mine, other := "gpu-a-"+s, "gpu-b-"+s
	createNode(t, c, gpuNode(mine))
	createNode(t, c, gpuNode(other))
	ns := testNamespace(t, c, "podindex", nil)

	here := map[string]*corev1.Pod{}
	for _, name := range []string{"train-0", "train-1"} {
		here[name] = runPod(t, c, podNamed(ns, name), mine)
	}
	there := runPod(t, c, podNamed(ns, "infer-0"), other)
	// A pod the scheduler has not bound yet belongs to no node's index.
	pending, err := c.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pending-0"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:1"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	idx := startIndex(t, cfg, mine)
	for name, p := range here {
		got, ok := idx.ByUID(string(p.UID))
		if !ok || got.Namespace != ns || got.Name != name || got.Phase != podindex.PodRunning {
			t.Errorf("ByUID(%s) = %+v, %v; want running %s/%s", p.UID, got, ok, ns, name)
			continue
		}
		id := strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
		if got.Containers[id] != "main" {
			t.Errorf("%s: containers = %v, want %s → main", name, got.Containers, id)
		}
	}
	for _, p := range []*corev1.Pod{there, pending} {
		if got, ok := idx.ByUID(string(p.UID)); ok {
			t.Errorf("the index of %s holds %s/%s (node %q): %+v", mine, p.Namespace, p.Name, p.Spec.NodeName, got)
		}
		if _, ok := idx.ByName(p.Namespace, p.Name); ok {
			t.Errorf("the index of %s resolves %s/%s by name", mine, p.Namespace, p.Name)
		}
	}

	// The other node's index sees the mirror image: the selector is not
	// merely filtering on the first node.
	otherIdx := startIndex(t, cfg, other)
	if _, ok := otherIdx.ByUID(string(there.UID)); !ok {
		t.Errorf("the index of %s misses its own pod infer-0", other)
	}
	if _, ok := otherIdx.ByName(ns, "train-0"); ok {
		t.Errorf("the index of %s holds train-0 of %s", other, mine)
	}
}

// TestPodIndexChurn deletes and creates pods under a running index, as
// rollouts and finished jobs do: deleted pods stop resolving, new ones
// appear, and a pod recreated under its old name (a StatefulSet replica)
// resolves by its new UID only.
func TestPodIndexChurn(t *testing.T) {
	cfg := adminConfig(t)
	c := clientFor(t, cfg)
	s := suffix(t)
	node, other := "gpu-churn-"+s, "gpu-churn-other-"+s
	createNode(t, c, gpuNode(node))
	createNode(t, c, gpuNode(other))
	ns := testNamespace(t, c, "churn", nil)
	ctx := t.Context()

	var pods []*corev1.Pod
	for _, name := range []string{"worker-0", "worker-1", "worker-2", "worker-3"} {
		pods = append(pods, runPod(t, c, podNamed(ns, name), node))
	}
	idx := startIndex(t, cfg, node)
	for _, p := range pods {
		if _, ok := idx.ByUID(string(p.UID)); !ok {
			t.Fatalf("%s missing after sync", p.Name)
		}
	}

	// Immediate deletion: without a kubelet, a graceful deletion would
	// leave the pod terminating forever.
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	for _, p := range pods[:2] {
		if err := c.CoreV1().Pods(ns).Delete(ctx, p.Name, now); err != nil {
			t.Fatal(err)
		}
	}
	replacement := runPod(t, c, podNamed(ns, "worker-0"), node)
	added := runPod(t, c, podNamed(ns, "worker-4"), node)
	elsewhere := runPod(t, c, podNamed(ns, "worker-5"), other)
	// A pod that finishes stays in the index, marked finished, until it is
	// deleted: attribution still needs it for the processes it leaves.
	done := pods[2].DeepCopy()
	if err := retryStatus(ctx, c, done, corev1.PodSucceeded); err != nil {
		t.Fatal(err)
	}

	eventually(t, "the index to follow the churn", func() bool {
		_, oldGone := idx.ByUID(string(pods[0].UID))
		_, deletedGone := idx.ByName(ns, "worker-1")
		r, replaced := idx.ByName(ns, "worker-0")
		_, addedIn := idx.ByUID(string(added.UID))
		fin, finOK := idx.ByUID(string(done.UID))
		return !oldGone && !deletedGone && replaced && r.UID == string(replacement.UID) &&
			addedIn && finOK && fin.Finished()
	})
	if _, ok := idx.ByUID(string(elsewhere.UID)); ok {
		t.Errorf("a pod created on %s during the watch reached the index of %s", other, node)
	}
	if _, ok := idx.ByUID(string(pods[1].UID)); ok {
		t.Error("a deleted pod still resolves by UID")
	}
	if p, ok := idx.ByUID(string(pods[3].UID)); !ok || p.Phase != podindex.PodRunning {
		t.Errorf("an untouched pod = %+v, %v", p, ok)
	}
}

// retryStatus moves a pod to a phase as its kubelet would, rereading it
// on a conflict.
func retryStatus(ctx context.Context, c kubernetes.Interface, p *corev1.Pod, phase corev1.PodPhase) error {
	for {
		cur, err := c.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Phase = phase
		for i := range cur.Status.ContainerStatuses {
			cs := &cur.Status.ContainerStatuses[i]
			cs.Ready = false
			cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: 0, Reason: "Completed", ContainerID: cs.ContainerID,
				StartedAt: cs.State.Running.StartedAt, FinishedAt: metav1.Now()}}
		}
		updated, err := c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		if err == nil {
			*p = *updated
			return nil
		}
		if !apierrors.IsConflict(err) {
			return err
		}
	}
}
