package podresources

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpulens/gpulens/exporter/podresources/podresourcestest"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.txt from the current output")

// summarize renders what the collector will see, one line per device, so
// golden files show every parsed field and the replica split.
func summarize(a *Allocations) string {
	var b strings.Builder
	for _, p := range a.Pods {
		for _, c := range p.Containers {
			for _, d := range c.Devices {
				fmt.Fprintf(&b, "%s/%s/%s %s %s kind=%s index=%d mig_index=%d gi=%d ci=%d parent=%q replica=%d of=%d mig=%t profile=%q shared=%t\n",
					p.Namespace, p.Name, c.Name, d.Resource, d.Ref, d.Ref.Kind, d.Ref.Index, d.Ref.MIGIndex,
					d.Ref.GPUInstance, d.Ref.ComputeInstance, d.Ref.ParentUUID, d.Ref.Replica, a.Replicas(d.Ref),
					d.Ref.IsMIG(), d.Ref.MIGProfile, d.Ref.Shared)
			}
			for _, cl := range c.Claims {
				fmt.Fprintf(&b, "%s/%s/%s claim=%s/%s driver=%s pool=%s device=%s share=%q\n",
					p.Namespace, p.Name, c.Name, cl.ClaimNamespace, cl.ClaimName, cl.Driver, cl.Pool, cl.Device, cl.ShareID)
			}
		}
	}
	for _, d := range a.Allocatable {
		fmt.Fprintf(&b, "allocatable %s %s\n", d.Resource, d.Ref)
	}
	fmt.Fprintf(&b, "skipped %d\n", a.Skipped)
	return b.String()
}

func TestRefreshFixtures(t *testing.T) {
	tests := []struct {
		scenario        string
		resourceNames   []vocab.Resource
		draDrivers      []string
		wantPods        int
		wantClaims      int
		wantAllocatable int
		wantParseErrors uint64
	}{
		{scenario: "whole-gpus", wantPods: 2, wantAllocatable: 4},
		{scenario: "time-sliced-4", wantPods: 4, wantAllocatable: 8},
		{scenario: "time-sliced-8", wantPods: 8, wantAllocatable: 8},
		{scenario: "renamed-shared", wantPods: 2, wantAllocatable: 2},
		{scenario: "mig-mixed", wantPods: 3, wantAllocatable: 4},
		{scenario: "mig-single", wantPods: 2, wantAllocatable: 4},
		{scenario: "mps", wantPods: 4, wantAllocatable: 6},
		// HAMi's device plugin at its default deviceSplitCount of 10
		// (charts/hami/values.yaml:347) on two GPUs: each advertised as
		// "<UUID>-0" … "<UUID>-9" (Project-HAMi/HAMi 4707fb02
		// pkg/device-plugin/nvidiadevice/nvinternal/rm/devices.go:209);
		// three tenants, each one of its GPU's ten replicas.
		{scenario: "hami-split", wantPods: 3, wantAllocatable: 20},
		{scenario: "gke", wantPods: 4, wantAllocatable: 8},
		{scenario: "index", wantPods: 2, wantAllocatable: 9},
		{
			scenario: "custom-and-bad", resourceNames: []vocab.Resource{"example.com/gpu-ts"},
			// Two bad IDs in List, two in GetAllocatableResources.
			wantPods: 2, wantAllocatable: 7, wantParseErrors: 4,
		},
		{
			// One device-plugin GPU; GPU claims of five containers (two
			// pods share one claim); an RDMA device in a GPU claim and a
			// pod holding an RDMA claim only, which are not GPUs.
			scenario: "dra", draDrivers: []string{DefaultDRADriver},
			wantPods: 6, wantAllocatable: 1, wantClaims: 5,
		},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			list, alloc := loadFixture(t, tt.scenario)
			sock := socketPath(t)
			podresourcestest.Start(t, sock, list, alloc)
			c := New(Options{Socket: sock, ResourceNames: tt.resourceNames, DRADrivers: tt.draDrivers, Logger: slog.New(&logRecorder{})})
			defer c.Close()

			before := time.Now()
			if err := c.Refresh(context.Background()); err != nil {
				t.Fatalf("Refresh: %v", err)
			}
			if !c.Up() {
				t.Error("Up() = false after a successful refresh")
			}
			snap := c.Snapshot()
			if snap == nil {
				t.Fatal("Snapshot() = nil after a successful refresh")
			}
			if snap.Time.Before(before) {
				t.Errorf("snapshot time %v predates the refresh at %v", snap.Time, before)
			}
			if len(snap.Pods) != tt.wantPods {
				t.Errorf("got %d GPU pods, want %d", len(snap.Pods), tt.wantPods)
			}
			if snap.ClaimDevices != tt.wantClaims {
				t.Errorf("got %d GPU claim devices, want %d", snap.ClaimDevices, tt.wantClaims)
			}
			if len(snap.Allocatable) != tt.wantAllocatable {
				t.Errorf("got %d allocatable GPU devices, want %d", len(snap.Allocatable), tt.wantAllocatable)
			}
			if got := c.ParseErrors(); got != tt.wantParseErrors {
				t.Errorf("ParseErrors() = %d, want %d", got, tt.wantParseErrors)
			}

			got := summarize(snap)
			golden := filepath.Join("testdata", tt.scenario, "want.txt")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("allocations differ from %s\n got:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// manyPods builds a List answer of n pods, each with one time-sliced GPU
// replica and a NIC, as a dense inference node reports.
func manyPods(n int) *v1.ListPodResourcesResponse {
	resp := &v1.ListPodResourcesResponse{}
	for i := range n {
		resp.PodResources = append(resp.PodResources, &v1.PodResources{
			Namespace: "inference-tenant-" + fmt.Sprint(i%50),
			Name:      fmt.Sprintf("model-server-%08d-deployment-abcde", i),
			Containers: []*v1.ContainerResources{{
				Name:   "server",
				CpuIds: []int64{int64(i % 128), int64((i + 1) % 128)},
				Devices: []*v1.ContainerDevices{
					{ResourceName: string(vocab.ResourceGPU), DeviceIds: []string{fmt.Sprintf("%s::%d", gpuUUID, i)}},
					{ResourceName: "nvidia.com/sriov_netdevice", DeviceIds: []string{fmt.Sprintf("0000:3b:%02x.%d", i%256, i%8)}},
				},
			}},
		})
	}
	return resp
}

func TestRefreshLargeResponse(t *testing.T) {
	const pods = 30000
	list := manyPods(pods)
	if size := proto.Size(list); size <= 4<<20 {
		t.Fatalf("fixture is %d bytes, must exceed gRPC's 4 MiB default to test anything", size)
	}
	sock := socketPath(t)
	podresourcestest.Start(t, sock, list, nil)

	smallLogs := &logRecorder{}
	small := New(Options{Socket: sock, MaxRecvBytes: 4 << 20, Logger: slog.New(smallLogs)})
	defer small.Close()
	err := small.Refresh(context.Background())
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("with a 4 MiB limit Refresh = %v, want ResourceExhausted", err)
	}
	// Not "unreachable": the kubelet answered, the limit refused it.
	if err == nil || !strings.Contains(err.Error(), "too large") || !strings.Contains(err.Error(), "--kubelet.pod-resources-max-message-size") {
		t.Errorf("with a 4 MiB limit Refresh = %v, want an error saying too large and naming the flag", err)
	}
	if got := counterValue(t, small, native.ExporterPodResourcesRefreshFailures, ReasonTooLarge); got != 1 {
		t.Errorf("refresh failures{reason=too_large} = %v, want 1", got)
	}
	if n, u := smallLogs.count(slog.LevelWarn, "too large"), smallLogs.count(slog.LevelWarn, "unreachable"); n != 1 || u != 0 {
		t.Errorf("%d warnings saying too large and %d saying unreachable, want 1 and 0", n, u)
	}

	c := New(Options{Socket: sock, Logger: slog.New(&logRecorder{})})
	defer c.Close()
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatalf("Refresh with the default limit: %v", err)
	}
	if got := len(c.Snapshot().Pods); got != pods {
		t.Errorf("got %d pods, want %d", got, pods)
	}
	if _, ok := c.Snapshot().Pod("inference-tenant-7", fmt.Sprintf("model-server-%08d-deployment-abcde", 12357)); !ok {
		t.Error("pod model-server-00012357 not found by Pod()")
	}
}

func TestRunSurvivesKubeletRestart(t *testing.T) {
	list, alloc := loadFixture(t, "time-sliced-4")
	sock := socketPath(t)
	srv := podresourcestest.Start(t, sock, list, alloc)
	logs := &logRecorder{}
	c := New(Options{Socket: sock, Interval: 20 * time.Millisecond, Timeout: 200 * time.Millisecond, Logger: slog.New(logs)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()

	waitFor(t, "first refresh", c.Up)
	if n := len(c.Snapshot().Pods); n != 4 {
		t.Fatalf("got %d pods before the restart, want 4", n)
	}

	srv.Stop()
	waitFor(t, "Up() to turn false", func() bool { return !c.Up() })
	// Several failures in a row also exercise replacing the connection.
	failuresAtStop := c.RefreshFailures()
	waitFor(t, "repeated failed refreshes", func() bool { return c.RefreshFailures() >= failuresAtStop+reconnectAfterFailures+2 })
	if c.Snapshot() != nil {
		t.Error("stale snapshot kept while the kubelet is down")
	}

	// The kubelet comes back with different pods.
	next, nextAlloc := loadFixture(t, "time-sliced-8")
	srv.Set(next, nextAlloc)
	srv.Restart()
	waitFor(t, "Up() to turn true again", c.Up)
	snap := c.Snapshot()
	if snap == nil || len(snap.Pods) != 8 {
		t.Fatalf("after the restart got %v, want the 8 pods the new kubelet reports", snap)
	}

	if n := logs.count(slog.LevelWarn, "unreachable"); n != 1 {
		t.Errorf("got %d WARN lines for one outage, want 1", n)
	}
	if n := logs.count(slog.LevelInfo, "reachable again"); n != 1 {
		t.Errorf("got %d recovery lines, want 1", n)
	}

	// A second outage is reported again, once.
	srv.Stop()
	waitFor(t, "second outage", func() bool { return !c.Up() })
	srv.Restart()
	waitFor(t, "second recovery", c.Up)
	if n := logs.count(slog.LevelWarn, "unreachable"); n != 2 {
		t.Errorf("got %d WARN lines for two outages, want 2", n)
	}
}

// TestRefreshAfterInstantRestart checks that gRPC reconnects a kept
// ClientConn by itself when the socket is deleted and recreated between two
// refreshes, without any failed refresh.
func TestRefreshAfterInstantRestart(t *testing.T) {
	list, alloc := loadFixture(t, "whole-gpus")
	sock := socketPath(t)
	srv := podresourcestest.Start(t, sock, list, alloc)
	c := New(Options{Socket: sock, Logger: slog.New(&logRecorder{})})
	defer c.Close()
	for i := range 3 {
		if err := c.Refresh(context.Background()); err != nil {
			t.Fatalf("refresh %d: %v", i, err)
		}
		srv.Restart()
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatalf("refresh after restart: %v", err)
	}
	if n := c.RefreshFailures(); n != 0 {
		t.Errorf("RefreshFailures() = %d, want 0", n)
	}
}

func TestRunSocketMissingAtStart(t *testing.T) {
	sock := socketPath(t)
	logs := &logRecorder{}
	c := New(Options{Socket: sock, Interval: 20 * time.Millisecond, Timeout: 100 * time.Millisecond, Logger: slog.New(logs)})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	defer func() { cancel(); <-done }()

	waitFor(t, "failed refreshes", func() bool { return c.RefreshFailures() >= 3 })
	if c.Up() || c.Snapshot() != nil {
		t.Fatalf("Up() = %v, Snapshot() = %v without a kubelet", c.Up(), c.Snapshot())
	}

	list, alloc := loadFixture(t, "mig-mixed")
	podresourcestest.Start(t, sock, list, alloc)
	waitFor(t, "Up() once the socket appears", c.Up)
	if _, ok := c.Snapshot().Pod("ml-train", "medium-job-x7"); !ok {
		t.Error("pod ml-train/medium-job-x7 missing after the kubelet appeared")
	}
	if n := logs.count(slog.LevelWarn, "unreachable"); n != 1 {
		t.Errorf("got %d WARN lines, want 1", n)
	}
}

func TestRefreshErrorNamesSocket(t *testing.T) {
	sock := socketPath(t)
	c := New(Options{Socket: sock, Timeout: 50 * time.Millisecond, Logger: slog.New(&logRecorder{})})
	defer c.Close()
	err := c.Refresh(context.Background())
	if err == nil || !strings.Contains(err.Error(), sock) {
		t.Errorf("Refresh without a kubelet = %v, want an error naming %s", err, sock)
	}
}

func TestRefreshCancelledKeepsState(t *testing.T) {
	list, alloc := loadFixture(t, "whole-gpus")
	sock := socketPath(t)
	srv := podresourcestest.Start(t, sock, list, alloc)
	logs := &logRecorder{}
	c := New(Options{Socket: sock, Logger: slog.New(logs)})
	defer c.Close()
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Refresh(ctx); err == nil {
		t.Fatal("Refresh with a cancelled context succeeded")
	}
	if !c.Up() || c.Snapshot() == nil || c.RefreshFailures() != 0 {
		t.Errorf("a cancelled refresh changed state: Up=%v snapshot=%v failures=%d", c.Up(), c.Snapshot() != nil, c.RefreshFailures())
	}
	if n := logs.count(slog.LevelWarn, ""); n != 0 {
		t.Errorf("a cancelled refresh logged %d warnings", n)
	}
}

// listOnly is a kubelet before GetAllocatableResources existed.
type listOnly struct {
	v1.UnimplementedPodResourcesListerServer
	resp *v1.ListPodResourcesResponse
}

func (l listOnly) List(context.Context, *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	return l.resp, nil
}

func TestRefreshWithoutGetAllocatable(t *testing.T) {
	list, _ := loadFixture(t, "time-sliced-4")
	sock := socketPath(t)
	lis, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	v1.RegisterPodResourcesListerServer(srv, listOnly{resp: list})
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()

	c := New(Options{Socket: sock, Logger: slog.New(&logRecorder{})})
	defer c.Close()
	for i := range 2 {
		if err := c.Refresh(context.Background()); err != nil {
			t.Fatalf("refresh %d: %v", i, err)
		}
	}
	snap := c.Snapshot()
	if len(snap.Pods) != 4 || len(snap.Allocatable) != 0 {
		t.Fatalf("got %d pods and %d allocatable, want 4 and 0", len(snap.Pods), len(snap.Allocatable))
	}
	if n := snap.Replicas(snap.Pods[0].Containers[0].Devices[0].Ref); n != 0 {
		t.Errorf("Replicas() = %d without allocatable devices, want 0 (unknown)", n)
	}
}
