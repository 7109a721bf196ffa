package attribution

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"testing"

	"github.com/gpulens/gpulens/exporter/attribution/cgroup"
	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
)

func TestPIDCache(t *testing.T) {
	reads := map[uint32]int{}
	answers := map[uint32]error{
		1: nil,
		2: cgroup.ErrNotKubernetes,
		3: fmt.Errorf("pid 3: %w", fs.ErrNotExist),
		4: errors.New("permission denied"),
	}
	c := &pidCache{read: func(_ string, pid uint32) (cgroup.Ref, error) {
		reads[pid]++
		if err := answers[pid]; err != nil {
			return cgroup.Ref{}, err
		}
		return cgroup.Ref{PodUID: podUID(int(pid))}, nil
	}}
	want := map[uint32]pidResult{1: pidInPod, 2: pidNotPod, 3: pidGone, 4: pidFailed}

	for pass := 0; pass < 3; pass++ {
		c.begin("/host/proc")
		for pid := uint32(1); pid <= 4; pid++ {
			ref, res := c.resolve(pid)
			if res != want[pid] {
				t.Errorf("pass %d: resolve(%d) = %v, want %v", pass, pid, res, want[pid])
			}
			if res == pidInPod && ref.PodUID != podUID(int(pid)) {
				t.Errorf("pass %d: resolve(%d) = %+v", pass, pid, ref)
			}
		}
		c.end()
	}
	// Answers that hold for the process's lifetime are read once; failures
	// and vanished processes are retried.
	if reads[1] != 1 || reads[2] != 1 || reads[3] != 3 || reads[4] != 3 {
		t.Errorf("reads = %v, want 1 1 3 3", reads)
	}
	if len(c.entries) != 2 {
		t.Errorf("cache holds %d entries, want 2", len(c.entries))
	}

	// A pass without PID 1 evicts it, so a reused PID is read afresh.
	c.begin("/host/proc")
	c.resolve(2)
	c.end()
	if _, ok := c.entries[1]; ok || len(c.entries) != 1 {
		t.Errorf("entries after a pass without PID 1: %v", c.entries)
	}
	c.begin("/host/proc")
	c.resolve(1)
	c.end()
	if reads[1] != 2 {
		t.Errorf("PID 1 read %d times after eviction, want 2", reads[1])
	}

	// Another /proc means other processes.
	c.begin("/other/proc")
	if len(c.entries) != 0 {
		t.Errorf("cache kept %d entries across proc roots", len(c.entries))
	}
	c.end()
}

func TestLocatorRebuildsOnlyOnLayoutChange(t *testing.T) {
	snap := snapshot(wholeGPU(0, 0.5, 1), migGPU(1, "NVIDIA H100 80GB HBM3", 1, instance(1, "1g.10gb", 1, 0.1, 1)))
	var l locator
	if !l.update(snap) {
		t.Fatal("first update did not build")
	}
	// A new sample of the same devices, values changed.
	next := snapshot(wholeGPU(0, 0.9, 2), migGPU(1, "NVIDIA H100 80GB HBM3", 2, instance(1, "1g.10gb", 1, 0.7, 2)))
	if l.update(next) {
		t.Error("rebuilt for an unchanged layout")
	}

	// MIG reconfigured: instance 1 replaced by instance 2.
	reconf := snapshot(wholeGPU(0, 0.9, 2), migGPU(1, "NVIDIA H100 80GB HBM3", 2, instance(2, "2g.20gb", 2, 0.7, 2)))
	if !l.update(reconf) {
		t.Fatal("did not rebuild after MIG reconfiguration")
	}
	ref := func(id string) podresources.DeviceRef {
		r, err := podresources.ParseDeviceID("nvidia.com/gpu", id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if _, ok := l.locate(reconf, ref(migUUID(1, 1))); ok {
		t.Error("removed instance still found")
	}
	if at, ok := l.locate(reconf, ref(migUUID(1, 2))); !ok || at != (loc{1, 0}) {
		t.Errorf("new instance at %v, %v; want {1 0}", at, ok)
	}

	// A GPU lost (and so its instances) is a layout change too.
	lost := snapshot(wholeGPU(0, 0.9, 2), gpu.Device{Index: 1, UUID: gpuUUID(1), MIGMode: true})
	if !l.update(lost) {
		t.Error("did not rebuild after the instances vanished")
	}
	if _, ok := l.locate(lost, ref(migUUID(1, 2))); ok {
		t.Error("instance of a lost GPU still found")
	}
	if at, ok := l.locate(lost, ref(gpuUUID(1))); !ok || at != (loc{1, -1}) {
		t.Errorf("lost GPU at %v, %v; want {1 -1}", at, ok)
	}
}

func TestResolverConcurrentPasses(t *testing.T) {
	k := newKubelet(t)
	in := Input{
		Snapshot: snapshot(wholeGPU(0, 0.9, 8, proc(1001, 2, 0.2), proc(1002, 1, 0.5), proc(1003, 0.5, 0.1))),
		Allocations: k.allocations([]advertise{{gpuRes, replicas(gpuUUID(0), 2)}},
			hold{"ml", "infer-0", "server", gpuRes, []string{gpuUUID(0) + "::0"}},
			hold{"ml", "infer-1", "server", gpuRes, []string{gpuUUID(0) + "::1"}}),
		Pods:     podindex.Static(indexed("ml", "infer-0", 1, "server"), indexed("ml", "infer-1", 2, "server")),
		ProcRoot: fixtureProc,
	}
	want, _ := Attribute(in)
	var r Resolver
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for range 25 {
				if got, _ := r.Attribute(in); !reflect.DeepEqual(got, want) {
					errs <- fmt.Errorf("got %v, want %v", lines(got), lines(want))
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
