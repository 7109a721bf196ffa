package main

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/podresources"
)

// TestLazySlicesStartOnFirstClaim: no ResourceSlice is listed while the
// kubelet reports no GPU claim, so a node without DRA needs no RBAC for
// them; the first claim starts the index, once.
func TestLazySlicesStartOnFirstClaim(t *testing.T) {
	const node, uuid = "gpu-node-7", "GPU-4d8c1e2a-3b5f-4a6c-8d7e-9f0a1b2c3d4e"
	var lists atomic.Int32
	slice := sliceindex.APIResourceSlice{Spec: sliceindex.APIResourceSliceSpec{
		Driver: podresources.DefaultDRADriver, NodeName: new(string), Pool: sliceindex.APIPool{Name: node},
		Devices: []sliceindex.APIDevice{{Name: "gpu-0", Attributes: map[string]sliceindex.APIDeviceAttribute{"uuid": {String: new(string)}}}},
	}}
	*slice.Spec.NodeName, *slice.Spec.Devices[0].Attributes["uuid"].String = node, uuid
	slice.Name = "s"
	lw := func(string) cache.ListerWatcher {
		return cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{
			ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
				lists.Add(1)
				return &sliceindex.APIResourceSliceList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}, Items: []sliceindex.APIResourceSlice{slice}}, nil
			},
			WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil },
		}, listOnly{})
	}
	l := &lazySlices{ctx: t.Context(), node: node, drivers: []string{podresources.DefaultDRADriver}, lw: lw, log: slog.New(slog.DiscardHandler)}
	key := podresources.DRADevice{Driver: podresources.DefaultDRADriver, Pool: node, Device: "gpu-0"}

	l.observe(nil)
	l.observe(&podresources.Allocations{Pods: []podresources.Pod{{Namespace: "a", Name: "b"}}})
	time.Sleep(50 * time.Millisecond)
	if n := lists.Load(); n != 0 {
		t.Fatalf("ResourceSlices listed %d times without a claim", n)
	}
	if _, ok := l.Lookup(key); ok {
		t.Fatal("a device resolves before the index started")
	}

	l.observe(&podresources.Allocations{ClaimDevices: 1})
	l.observe(&podresources.Allocations{ClaimDevices: 2})
	deadline := time.Now().Add(10 * time.Second)
	for {
		if d, ok := l.Lookup(key); ok {
			if d.UUID != uuid {
				t.Errorf("Lookup(gpu-0) = %+v, want uuid %s", d, uuid)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the index did not resolve gpu-0 after the first claim")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := lists.Load(); n != 1 {
		t.Errorf("ResourceSlices listed %d times, want 1: one index", n)
	}
}

// listOnly tells the reflector that the fake does not send the initial
// list as watch events.
type listOnly struct{}

func (listOnly) IsWatchListSemanticsUnSupported() bool { return true }
