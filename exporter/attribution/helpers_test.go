package attribution

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/exporter/podresources/podresourcestest"
)

// fixtureProc is a host /proc with the cgroup files of the PIDs the
// scenarios use; see the PIDs in scenario_test.go.
const fixtureProc = "testdata/proc"

const gib = 1 << 30

// The fixture tree names pod n and its container by these.
func podUID(n int) string      { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }
func containerID(n int) string { return fmt.Sprintf("%064d", n) }

func gpuUUID(n int) string     { return fmt.Sprintf("GPU-%08d-0000-4000-8000-000000000000", n) }
func migUUID(g, gi int) string { return fmt.Sprintf("MIG-%08d-%04d-4000-8000-000000000000", g, gi) }

// indexed is a running pod n whose single container is named name.
func indexed(namespace, pod string, n int, container string) podindex.Pod {
	return podindex.Pod{
		UID: podUID(n), Namespace: namespace, Name: pod, Phase: podindex.PodRunning,
		Containers: map[string]string{containerID(n): container},
	}
}

func wholeGPU(index int, util, memGiB float64, procs ...gpu.Process) gpu.Device {
	return gpu.Device{
		Index: index, UUID: gpuUUID(index), Model: "NVIDIA H100 80GB HBM3", Up: true,
		Utilization: util, MemoryUsedBytes: memGiB * gib, MemoryTotalBytes: 80 * gib,
		SMActive: gpu.NA, Processes: procs,
	}
}

func migGPU(index int, model string, memGiB float64, instances ...gpu.Instance) gpu.Device {
	d := wholeGPU(index, gpu.NA, memGiB)
	d.Model, d.MIGMode, d.Instances = model, true, instances
	for i := range d.Instances {
		// As the backend lists them: in MIG device index order.
		d.Instances[i].Index = i
		if d.Instances[i].UUID == "" {
			d.Instances[i].UUID = migUUID(index, d.Instances[i].GPUInstanceID)
		}
	}
	return d
}

func instance(gi int, profile string, slices int, smActive, memGiB float64) gpu.Instance {
	return gpu.Instance{
		GPUInstanceID: gi, ComputeInstanceID: 0, Profile: profile, Slices: slices,
		SMActive: smActive, MemoryUsedBytes: memGiB * gib, MemoryTotalBytes: 10 * gib,
		SMOccupancy: gpu.NA, TensorActive: gpu.NA, DRAMActive: gpu.NA,
	}
}

func proc(pid uint32, memGiB, sm float64) gpu.Process {
	return gpu.Process{PID: pid, GPUInstanceID: -1, ComputeInstanceID: -1, MemoryUsedBytes: memGiB * gib, SMUtilization: sm}
}

func migProc(pid uint32, gi int, memGiB float64) gpu.Process {
	p := proc(pid, memGiB, gpu.NA)
	p.GPUInstanceID, p.ComputeInstanceID = gi, 0
	return p
}

func snapshot(devices ...gpu.Device) *gpu.Snapshot { return &gpu.Snapshot{Devices: devices} }

// hold is one container's device IDs of one resource.
type hold struct {
	namespace, pod, container, resource string
	ids                                 []string
}

// claimHold is one container's devices (pool/device of the GPU driver's
// slices) of a ResourceClaim in its namespace.
type claimHold struct {
	namespace, pod, container, claim string
	devices                          []string
}

// advertise lists what the node advertises: ids of resource.
type advertise struct {
	resource string
	ids      []string
}

func replicas(base string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = base + "::" + strconv.Itoa(i)
	}
	return ids
}

// kubelet turns holds into Allocations the way the exporter gets them: from
// a pod-resources server through the real client, so replica counts and ID
// parsing are the production ones.
type kubelet struct {
	t      testing.TB
	server *podresourcestest.Server
	client *podresources.Client
}

func newKubelet(t testing.TB) *kubelet {
	t.Helper()
	dir, err := os.MkdirTemp("", "attr") // unix socket paths must stay short
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "kubelet.sock")
	k := &kubelet{t: t, server: podresourcestest.Start(t, socket, nil, nil)}
	k.client = podresources.New(podresources.Options{Socket: socket, DRADrivers: []string{podresources.DefaultDRADriver},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { k.client.Close() })
	return k
}

func (k *kubelet) allocations(adv []advertise, holds ...hold) *podresources.Allocations {
	k.t.Helper()
	return k.allocationsWithClaims(adv, nil, holds...)
}

// allocationsWithClaims is allocations with claims as well.
func (k *kubelet) allocationsWithClaims(adv []advertise, claims []claimHold, holds ...hold) *podresources.Allocations {
	k.t.Helper()
	list := &v1.ListPodResourcesResponse{}
	byPod := map[string]*v1.PodResources{}
	for _, h := range holds {
		cr := containerOf(list, byPod, h.namespace, h.pod, h.container)
		cr.Devices = append(cr.Devices, &v1.ContainerDevices{ResourceName: h.resource, DeviceIds: h.ids})
	}
	for _, h := range claims {
		cr := containerOf(list, byPod, h.namespace, h.pod, h.container)
		cr.DynamicResources = append(cr.DynamicResources,
			podresourcestest.Claim(h.namespace, h.claim, podresources.DefaultDRADriver, h.devices...))
	}
	alloc := &v1.AllocatableResourcesResponse{}
	for _, a := range adv {
		alloc.Devices = append(alloc.Devices, &v1.ContainerDevices{ResourceName: a.resource, DeviceIds: a.ids})
	}
	k.server.Set(list, alloc)
	if err := k.client.Refresh(context.Background()); err != nil {
		k.t.Fatalf("refresh from fake kubelet: %v", err)
	}
	return k.client.Snapshot()
}

// containerOf finds or adds the container's entry in list.
func containerOf(list *v1.ListPodResourcesResponse, byPod map[string]*v1.PodResources, namespace, pod, container string) *v1.ContainerResources {
	pr := byPod[namespace+"/"+pod]
	if pr == nil {
		pr = &v1.PodResources{Namespace: namespace, Name: pod}
		byPod[namespace+"/"+pod] = pr
		list.PodResources = append(list.PodResources, pr)
	}
	for _, c := range pr.Containers {
		if c.Name == container {
			return c
		}
	}
	cr := &v1.ContainerResources{Name: container}
	pr.Containers = append(pr.Containers, cr)
	return cr
}

// line renders the fields a scenario asserts, rounded so that expectations
// read as decimals.
func line(r ContainerGPU) string {
	s := fmt.Sprintf("%s/%s/%s gpu=%d gi=%d %s alloc=%s util=%s mem=%s",
		r.Namespace, r.Pod, r.Container, r.GPU, r.GPUInstance, r.Sharing,
		num(r.Allocation), measured(r.Utilization, r.UtilizationMethod, 1),
		measured(r.MemoryUsedBytes, r.MemoryMethod, 1<<20))
	if r.MIGProfile != "" {
		s += " profile=" + r.MIGProfile
	}
	return s
}

func lines(recs []ContainerGPU) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = line(r)
	}
	return out
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// measured shows NA as such and flags a method that contradicts the value.
func measured(v float64, method string, unit float64) string {
	switch {
	case !gpu.Valid(v) && method == "":
		return "NA"
	case !gpu.Valid(v) || method == "":
		return fmt.Sprintf("INCONSISTENT(%v,%q)", v, method)
	}
	s := num(v / unit)
	if unit != 1 {
		s += "MiB"
	}
	return s + "(" + method + ")"
}

func diffLines(got, want []string) string {
	if strings.Join(got, "\n") == strings.Join(want, "\n") {
		return ""
	}
	return fmt.Sprintf("got:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
}

// unsynced is an index that has not seen the full pod list yet.
type unsynced struct{ podindex.Index }

func (unsynced) Synced() bool { return false }

// procTree is a generated host /proc for tests with more pods than the
// fixture tree holds.
type procTree struct {
	t       testing.TB
	dir     string
	written map[uint32]string
}

func newProcTree(t testing.TB) procTree {
	t.Helper()
	p := procTree{t: t, dir: t.TempDir(), written: map[uint32]string{}}
	p.write(1, "0::/init.scope\n")
	return p
}

// pod places pid in container n of pod n, as the fixture tree does.
func (p procTree) pod(pid uint32, n int) {
	uid := strings.ReplaceAll(podUID(n), "-", "_")
	p.write(pid, fmt.Sprintf("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod%s.slice/cri-containerd-%s.scope\n", uid, containerID(n)))
}

// write creates or replaces <pid>/cgroup, skipping unchanged files: writes
// dominate the cost of generated tests.
func (p procTree) write(pid uint32, content string) {
	if p.written[pid] == content {
		return
	}
	p.written[pid] = content
	dir := filepath.Join(p.dir, strconv.FormatUint(uint64(pid), 10))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup"), []byte(content), 0o644); err != nil {
		p.t.Fatal(err)
	}
}
