package simkube

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gpulens/gpulens/exporter/attribution/cgroup"
	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/exporter/sim"
)

var start = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

func defaultNodes(t *testing.T) []*sim.NodeSim {
	t.Helper()
	sc := sim.Default()
	var out []*sim.NodeSim
	for _, n := range sc.Nodes {
		ns, err := sim.NewNode(sc, n.Name, start)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ns.Close() })
		ns.Advance(start.Add(2 * 24 * time.Hour))
		out = append(out, ns)
	}
	return out
}

// TestResponsesParse: every device ID the simulated kubelet hands out is
// understood by the real parser, and allocations mirror the running pods.
func TestResponsesParse(t *testing.T) {
	for _, n := range defaultNodes(t) {
		list, alloc := Responses(n)
		a, errs := podresources.FromResponses(start, list, alloc, Selection)
		if len(errs) != 0 {
			t.Fatalf("%s: %v", n.Node().Name, errs)
		}
		if len(a.Pods) != len(n.Pods()) {
			t.Errorf("%s: %d allocated pods, simulator runs %d", n.Node().Name, len(a.Pods), len(n.Pods()))
		}
		for _, p := range n.Pods() {
			got, ok := a.Pod(p.Namespace, p.Name)
			if p.Claim != "" {
				want := podresources.ClaimDevice{ClaimNamespace: p.Namespace, ClaimName: p.Claim,
					Driver: sim.DRADriver, Pool: n.Node().Name, Device: p.DRADevice}
				if !ok || len(got.Containers) != 1 || len(got.Containers[0].Devices) != 0 ||
					len(got.Containers[0].Claims) != 1 || got.Containers[0].Claims[0] != want {
					t.Errorf("%s/%s: %+v, want claim %+v only", p.Namespace, p.Name, got, want)
				}
				continue
			}
			if !ok || len(got.Containers) != 1 || len(got.Containers[0].Devices) != 1 {
				t.Fatalf("%s/%s missing or malformed: %+v", p.Namespace, p.Name, got)
			}
			ref := got.Containers[0].Devices[0].Ref
			if p.Replicas > 0 && a.Replicas(ref) != p.Replicas {
				t.Errorf("%s/%s: %d replicas, want %d", p.Namespace, p.Name, a.Replicas(ref), p.Replicas)
			}
		}
	}
}

func TestProcTreeMatchesCgroupParser(t *testing.T) {
	n := defaultNodes(t)[0]
	dir := t.TempDir()
	tree, err := NewProcTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	pods := n.Pods()
	if err := tree.Sync(pods); err != nil {
		t.Fatal(err)
	}
	if _, err := cgroup.ReadPID(dir, 1); !errors.Is(err, cgroup.ErrNotKubernetes) {
		t.Errorf("PID 1 must look like the host's init, got %v", err)
	}
	for _, p := range pods {
		for _, pid := range p.PIDs {
			ref, err := cgroup.ReadPID(dir, pid)
			if err != nil || ref.PodUID != p.UID || ref.ContainerID != p.ContainerID {
				t.Errorf("pid %d: %+v %v, want %s %s", pid, ref, err, p.UID, p.ContainerID)
			}
		}
	}
	if err := tree.Sync(pods[1:]); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pods[0].PIDs {
		if _, err := os.Stat(filepath.Join(dir, strconv.FormatUint(uint64(pid), 10))); !os.IsNotExist(err) {
			t.Errorf("pid %d of an ended pod still in the tree", pid)
		}
	}
}

// TestClusterSync runs the real pod informer against the simulated API
// server through the simulator's pods starting and ending.
func TestClusterSync(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := defaultNodes(t)[0]
	c, err := NewCluster(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	pods := n.Pods()
	if len(pods) < 2 {
		t.Fatalf("%d pods on the node, want at least 2", len(pods))
	}
	if err := c.Sync(ctx, pods); err != nil {
		t.Fatal(err)
	}
	idx := podindex.New(c, n.Node().Name, 0, slog.New(slog.DiscardHandler))
	go idx.Run(ctx)
	eventually(t, "initial list", func() bool { return idx.Synced() })
	for _, p := range pods {
		if got, ok := idx.ByUID(p.UID); !ok || got.Name != p.Name || got.Containers[p.ContainerID] != p.Container {
			t.Errorf("pod %s: %+v %v", p.Name, got, ok)
		}
	}

	// A pod ends; another of the same name starts with a new UID.
	last := pods[len(pods)-1]
	if err := c.Sync(ctx, pods[:len(pods)-1]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "deletion", func() bool { _, ok := idx.ByUID(last.UID); return !ok })
	again := last
	again.UID = "0f0e0d0c-0b0a-4909-8807-060504030201"
	if err := c.Sync(ctx, append(pods[:len(pods)-1:len(pods)-1], again)); err != nil {
		t.Fatal(err)
	}
	eventually(t, "restart", func() bool { p, ok := idx.ByUID(again.UID); return ok && p.Name == last.Name })

	// The field selector is honoured.
	other, err := c.List(metav1.ListOptions{FieldSelector: "spec.nodeName=elsewhere"})
	if err != nil || len(other.(*podindex.APIPodList).Items) != 0 {
		t.Errorf("pods of another node: %v %v", other, err)
	}
	if node := c.Node(); node.Labels["nvidia.com/gpu.present"] != "true" {
		t.Errorf("node labels: %v", node.Labels)
	}
}

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

// TestServeKubelet runs the real client against the simulated kubelet.
func TestServeKubelet(t *testing.T) {
	n := defaultNodes(t)[1]
	dir, err := os.MkdirTemp("", "sk")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "kubelet.sock")
	stop, err := ServeKubelet(sock, n)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c := podresources.New(podresources.Options{Socket: sock})
	defer c.Close()
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := len(c.Snapshot().Pods); got != len(n.Pods()) {
		t.Errorf("%d pods over gRPC, want %d", got, len(n.Pods()))
	}
}
