package sliceindex

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/gpulens/gpulens/exporter/podresources"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

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

// noWatchList tells the reflector that the fake watcher below does not
// send the initial list as watch events.
type noWatchList struct{}

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// fakeSlices lists initial and then serves the events the test sends on
// the returned watcher.
func fakeSlices(initial ...APIResourceSlice) (cache.ListerWatcher, *watch.FakeWatcher) {
	w := watch.NewFake()
	return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &APIResourceSliceList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: initial}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return w, nil },
	}, noWatchList{}), w
}

func startIndex(t *testing.T, lw cache.ListerWatcher) *Informer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	idx := New(node, []string{driver}, func(string) cache.ListerWatcher { return lw }, quiet())
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

func key(device string) podresources.DRADevice {
	return podresources.DRADevice{Driver: driver, Pool: node, Device: device}
}

// TestInformerFollowsSlices: devices resolve from the listed slices of
// this node only, and a MIG device created on demand resolves while its
// slice exists and no longer once the driver deletes it.
func TestInformerFollowsSlices(t *testing.T) {
	mine := loadSlice(t, "testdata/gpu-node-7.json")
	other := mine.DeepCopy()
	other.Name, other.Spec.NodeName, other.Spec.Pool.Name = "gpu-node-8-gpu.nvidia.com-a1b2c", new(string), "gpu-node-8"
	*other.Spec.NodeName = "gpu-node-8"
	lw, w := fakeSlices(*mine, *other)
	idx := startIndex(t, lw)

	if d, ok := idx.Lookup(key("gpu-0")); !ok || d.UUID != gpu0UUID || d.Type != TypeGPU {
		t.Errorf("Lookup(gpu-0) = %+v, %v; want GPU %s", d, ok, gpu0UUID)
	}
	if d, ok := idx.Lookup(key("gpu-1-mig-1g10gb-19-6")); !ok || d.UUID != mig1UUID || d.ParentUUID != gpu1UUID {
		t.Errorf("Lookup(MIG) = %+v, %v; want %s on %s", d, ok, mig1UUID, gpu1UUID)
	}
	if _, ok := idx.Lookup(podresources.DRADevice{Driver: driver, Pool: "gpu-node-8", Device: "gpu-0"}); ok {
		t.Error("a device of another node's slice resolves")
	}

	const created = "gpu-1-mig-3g40gb-9-4"
	const createdUUID = "MIG-9a8b7c6d-5e4f-5a3b-9c2d-1e0f9a8b7c6d"
	dyn := &APIResourceSlice{Spec: APIResourceSliceSpec{Driver: driver, NodeName: mine.Spec.NodeName,
		Pool: mine.Spec.Pool, Devices: []APIDevice{{Name: created, Attributes: map[string]APIDeviceAttribute{
			"type": str("mig"), "uuid": str(createdUUID), "parentUUID": str(gpu1UUID), "profile": str("3g.40gb")}}}}}
	dyn.Name, dyn.ResourceVersion = "gpu-node-7-gpu.nvidia.com-mig9", "5000"
	w.Add(dyn)
	eventually(t, "the created MIG device to resolve", func() bool {
		d, ok := idx.Lookup(key(created))
		return ok && d.UUID == createdUUID
	})
	w.Delete(dyn)
	eventually(t, "the deleted MIG device to stop resolving", func() bool {
		_, ok := idx.Lookup(key(created))
		return !ok
	})

	// The driver rewrites its slice without the static MIG device.
	changed := mine.DeepCopy()
	changed.ResourceVersion = "5001"
	changed.Spec.Devices = changed.Spec.Devices[:1]
	w.Modify(changed)
	eventually(t, "the removed MIG device to stop resolving", func() bool {
		_, ok := idx.Lookup(key("gpu-1-mig-1g10gb-19-6"))
		return !ok
	})
	if _, ok := idx.Lookup(key("gpu-0")); !ok {
		t.Error("gpu-0 lost with an update that kept it")
	}
}

// apiServer answers resourceslices requests with status, recording their
// field selectors, and the list of slice when status is 200.
func apiServer(t *testing.T, status int, slice *APIResourceSlice) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var selectors []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/apis/resource.k8s.io/v1/resourceslices" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		selectors = append(selectors, r.URL.Query().Get("fieldSelector"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
				Status: metav1.StatusFailure, Code: int32(status), Reason: metav1.StatusReasonForbidden,
				Message: `resourceslices.resource.k8s.io is forbidden: User "system:serviceaccount:gpulens:gpulens-exporter" cannot list resource "resourceslices"`})
			return
		}
		if r.URL.Query().Get("watch") == "true" {
			if r.URL.Query().Get("sendInitialEvents") == "true" {
				enc := json.NewEncoder(w)
				_ = enc.Encode(map[string]any{"type": "ADDED", "object": slice})
				end := &APIResourceSlice{TypeMeta: slice.TypeMeta, ObjectMeta: metav1.ObjectMeta{ResourceVersion: "9",
					Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
				_ = enc.Encode(map[string]any{"type": "BOOKMARK", "object": end})
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			return
		}
		_ = json.NewEncoder(w).Encode(APIResourceSliceList{
			TypeMeta: metav1.TypeMeta{Kind: "ResourceSliceList", APIVersion: "resource.k8s.io/v1"},
			ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []APIResourceSlice{*slice}})
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), selectors...)
	}
}

// TestInformerOverHTTP runs the production path, NewClient and
// NodeSlices: requests go to resource.k8s.io/v1 with the node's and the
// driver's field selectors, and the slice's devices resolve.
func TestInformerOverHTTP(t *testing.T) {
	srv, selectors := apiServer(t, http.StatusOK, loadSlice(t, "testdata/gpu-node-7.json"))
	c, err := NewClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	idx := startIndex(t, NodeSlices(c, node, driver))
	if d, ok := idx.Lookup(key("gpu-0")); !ok || d.UUID != gpu0UUID {
		t.Errorf("Lookup(gpu-0) = %+v, %v", d, ok)
	}
	want := "spec.nodeName=" + node + ",spec.driver=" + driver
	got := selectors()
	if len(got) == 0 {
		t.Fatal("no request reached the server")
	}
	for _, s := range got {
		if s != want {
			t.Errorf("field selector %q, want %q", s, want)
		}
	}
}

// logCounter counts warnings, to check that a refusal is reported once.
type logCounter struct {
	mu    sync.Mutex
	warns []string
}

func (l *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCounter) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logCounter) WithGroup(string) slog.Handler            { return l }
func (l *logCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		l.mu.Lock()
		l.warns = append(l.warns, r.Message)
		l.mu.Unlock()
	}
	return nil
}

func (l *logCounter) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.warns...)
}

// TestInformerForbidden: without RBAC for resourceslices the index stays
// empty and unsynced, retries, and warns once however often it is refused.
func TestInformerForbidden(t *testing.T) {
	srv, selectors := apiServer(t, http.StatusForbidden, nil)
	c, err := NewClient(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	logs := &logCounter{}
	idx := New(node, []string{driver}, func(d string) cache.ListerWatcher { return NodeSlices(c, node, d) }, slog.New(logs))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { idx.Run(ctx); close(done) }()
	// The reflector tries a streaming list, then a list, then retries
	// after a backoff of about a second: wait for that retry.
	eventually(t, "a retried list and the warning", func() bool { return len(selectors()) >= 3 && len(logs.warnings()) > 0 })
	cancel()
	<-done
	if idx.Synced() {
		t.Error("synced although every list was refused")
	}
	if _, ok := idx.Lookup(key("gpu-0")); ok {
		t.Error("a device resolves without any slice")
	}
	warns := logs.warnings()
	if len(warns) != 1 || !strings.Contains(warns[0], "resourceslices") {
		t.Errorf("warnings = %q, want one naming resourceslices", warns)
	}
}
