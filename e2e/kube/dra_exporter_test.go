package kube

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gpulens/gpulens/exporter/attribution"
	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/exporter/podresources/podresourcestest"
)

const gpuDriver = podresources.DefaultDRADriver

// nvidiaSlice is a ResourceSlice of node's pool as NVIDIA's DRA driver
// writes one (k8s-dra-driver-gpu, cmd/gpu-kubelet-plugin: GPUs named
// gpu-<minor>, MIG devices gpu-<minor>-mig-<profile>-<id>-<placement>,
// attributes type, uuid, parentUUID, profile, productName), of the given
// driver.
func nvidiaSlice(name, node, driver string, devices ...resourcev1.Device) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			NodeName: &node,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices:  devices,
		},
	}
}

func attrs(kv ...string) map[resourcev1.QualifiedName]resourcev1.DeviceAttribute {
	out := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}
	for i := 0; i+1 < len(kv); i += 2 {
		out[resourcev1.QualifiedName(kv[i])] = resourcev1.DeviceAttribute{StringValue: &kv[i+1]}
	}
	return out
}

func createSlice(t *testing.T, c kubernetes.Interface, s *resourcev1.ResourceSlice) *resourcev1.ResourceSlice {
	t.Helper()
	out, err := c.ResourceV1().ResourceSlices().Create(t.Context(), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create ResourceSlice %s: %v", s.Name, err)
	}
	t.Cleanup(func() {
		_ = c.ResourceV1().ResourceSlices().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
	})
	return out
}

// startSliceIndex runs the exporter's ResourceSlice index of node as cfg's
// identity, through the exporter's own resource.k8s.io/v1 client.
func startSliceIndex(t *testing.T, cfg *rest.Config, node string, log *warnLog) *sliceindex.Informer {
	t.Helper()
	rc, err := sliceindex.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	idx := sliceindex.New(node, []string{gpuDriver},
		func(d string) cache.ListerWatcher { return sliceindex.NodeSlices(rc, node, d) }, slog.New(log))
	go idx.Run(ctx)
	return idx
}

// TestExporterResolvesResourceSlices runs the exporter's ResourceSlice
// index as the chart's exporter ServiceAccount against slices written to
// the API server: the server accepts its spec.nodeName and spec.driver
// field selectors and sends only the GPU driver's slices of its node; a
// whole GPU resolves to its UUID, a MIG device the driver adds later
// resolves once its slice exists and no longer once it is deleted; and a
// claim's devices are attributed to the snapshot's GPU and MIG instance.
func TestExporterResolvesResourceSlices(t *testing.T) {
	admin := adminConfig(t)
	ac := clientFor(t, admin)
	ids := applyChartRBAC(t, admin, ac)
	s := suffix(t)
	node, other := "gpu-dra-"+s, "gpu-dra-other-"+s
	createNode(t, ac, gpuNode(node))
	const (
		gpuUUID    = "GPU-4d8c1e2a-3b5f-4a6c-8d7e-9f0a1b2c3d4e"
		parentUUID = "GPU-7a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
		migUUID    = "MIG-1f2e3d4c-5b6a-5978-8a9b-0c1d2e3f4a5b"
		h100       = "NVIDIA H100 80GB HBM3"
		migDevice  = "gpu-1-mig-1g10gb-19-6"
	)
	createSlice(t, ac, nvidiaSlice(node+"-gpu.nvidia.com-a", node, gpuDriver,
		resourcev1.Device{Name: "gpu-0", Attributes: attrs("type", "gpu", "uuid", gpuUUID, "productName", h100)}))
	// Another node's GPU, and another driver's device on this node: the
	// server's field selectors keep both from the index.
	createSlice(t, ac, nvidiaSlice(other+"-gpu.nvidia.com-a", other, gpuDriver,
		resourcev1.Device{Name: "gpu-0", Attributes: attrs("type", "gpu", "uuid", "GPU-00000000-0000-4000-8000-000000000000")}))
	createSlice(t, ac, nvidiaSlice(node+"-rdma", node, "rdma.example.com",
		resourcev1.Device{Name: "gpu-0", Attributes: attrs("uuid", "GPU-11111111-0000-4000-8000-000000000000")}))

	sa := ids.exporter
	who := "the exporter (" + sa.Namespace + "/" + sa.Name + ")"
	cfg := asServiceAccount(admin, sa.Namespace, sa.Name)
	warnings := &warnLog{}
	idx := startSliceIndex(t, cfg, node, warnings)
	eventually(t, who+"'s ResourceSlice index to sync", idx.Synced)
	// Registered after startSliceIndex's cancel, so it runs first, while
	// the index is still up.
	t.Cleanup(func() {
		for _, w := range warnings.all() {
			t.Errorf("the ResourceSlice index of %s warned: %s", node, w)
		}
	})
	key := func(driver, pool, device string) podresources.DRADevice {
		return podresources.DRADevice{Driver: driver, Pool: pool, Device: device}
	}
	if d, ok := idx.Lookup(key(gpuDriver, node, "gpu-0")); !ok || d.UUID != gpuUUID || d.Type != sliceindex.TypeGPU || d.ProductName != h100 {
		t.Errorf("Lookup(gpu-0) = %+v, %v; want GPU %s", d, ok, gpuUUID)
	}
	if _, ok := idx.Lookup(key(gpuDriver, other, "gpu-0")); ok {
		t.Error("another node's device resolves")
	}
	if _, ok := idx.Lookup(key("rdma.example.com", node, "gpu-0")); ok {
		t.Error("another driver's device resolves: the spec.driver selector was not applied")
	}

	// The driver creates a MIG device on demand and publishes it.
	mig := createSlice(t, ac, nvidiaSlice(node+"-gpu.nvidia.com-mig", node, gpuDriver,
		resourcev1.Device{Name: migDevice, Attributes: attrs("type", "mig", "uuid", migUUID, "parentUUID", parentUUID, "profile", "1g.10gb", "productName", h100)}))
	eventually(t, "the MIG device to resolve", func() bool {
		d, ok := idx.Lookup(key(gpuDriver, node, migDevice))
		return ok && d.UUID == migUUID && d.ParentUUID == parentUUID && d.Profile == "1g.10gb"
	})

	// A claim's devices, as the kubelet lists them, attributed through the
	// index to the snapshot's devices.
	list := &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{{
		Namespace: "ml", Name: "chat", Containers: []*podresourcesv1.ContainerResources{{Name: "server",
			DynamicResources: []*podresourcesv1.DynamicResource{
				podresourcestest.Claim("ml", "chat-gpus", gpuDriver, node+"/gpu-0", node+"/"+migDevice),
			}}},
	}}}
	allocs, errs := podresources.FromResponses(time.Now(), list, nil, podresources.Selection{DRADrivers: []string{gpuDriver}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	snap := &gpu.Snapshot{Devices: []gpu.Device{
		{Index: 0, UUID: gpuUUID, Model: h100, Up: true, Utilization: 0.5, MemoryUsedBytes: 1 << 30},
		{Index: 1, UUID: parentUUID, Model: h100, Up: true, MIGMode: true, MIGComputeSlices: 7, Utilization: gpu.NA, MemoryUsedBytes: gpu.NA,
			Instances: []gpu.Instance{{UUID: migUUID, GPUInstanceID: 9, ComputeInstanceID: 0, Profile: "1g.10gb", Slices: 1, SMActive: gpu.NA, MemoryUsedBytes: gpu.NA}}},
	}}
	recs, st := attribution.Attribute(attribution.Input{Snapshot: snap, Allocations: allocs, Slices: idx})
	if st.UnmatchedDevices != 0 || len(recs) != 2 {
		t.Fatalf("attributed %d records, %d unmatched; want the GPU and the MIG instance", len(recs), st.UnmatchedDevices)
	}
	for _, r := range recs {
		if len(r.Claims) != 1 || r.Claims[0].Name != "chat-gpus" {
			t.Errorf("%s: claims %+v, want ml/chat-gpus", r.UUID, r.Claims)
		}
	}
	if r := recs[0]; r.UUID != gpuUUID || r.Sharing != attribution.SharingNone || r.Allocation != 1 {
		t.Errorf("whole GPU through the claim: %+v", r)
	}
	if r := recs[1]; r.UUID != parentUUID || r.GPUInstance != 9 || r.Sharing != attribution.SharingMIG || r.Allocation != 1.0/7 {
		t.Errorf("MIG device through the claim: %+v", r)
	}

	// The driver deletes the MIG device.
	if err := ac.ResourceV1().ResourceSlices().Delete(t.Context(), mig.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted MIG device to stop resolving", func() bool {
		_, ok := idx.Lookup(key(gpuDriver, node, migDevice))
		return !ok
	})

	// It reads, and does not write, slices.
	c := clientFor(t, cfg)
	if _, err := c.ResourceV1().ResourceSlices().Get(t.Context(), node+"-gpu.nvidia.com-a", metav1.GetOptions{}); err != nil {
		t.Errorf("%s cannot get a ResourceSlice: %v", who, err)
	}
	_, err := c.ResourceV1().ResourceSlices().Create(t.Context(), nvidiaSlice("intruder-"+s, node, gpuDriver), metav1.CreateOptions{})
	forbidden(t, who, "create ResourceSlices", err)
	err = c.ResourceV1().ResourceSlices().Delete(t.Context(), node+"-gpu.nvidia.com-a", metav1.DeleteOptions{})
	forbidden(t, who, "delete ResourceSlices", err)
	_, err = c.ResourceV1().ResourceClaims("").List(t.Context(), metav1.ListOptions{})
	forbidden(t, who, "list ResourceClaims", err)
}

// TestSliceIndexWithoutRBAC: an identity the cluster did not grant
// resourceslices (a chart older than DRA support) gets an index that never
// syncs and says so once, however often the reflector retries.
func TestSliceIndexWithoutRBAC(t *testing.T) {
	admin := adminConfig(t)
	ac := clientFor(t, admin)
	ns := testNamespace(t, ac, "dra-norbac", nil)
	node := "gpu-dra-norbac-" + suffix(t)
	cfg := asServiceAccount(admin, ns, "default")
	warnings := &warnLog{}
	idx := startSliceIndex(t, cfg, node, warnings)
	// client-go backs off from 800ms, doubling, after a failed list: wait
	// for a few retries.
	time.Sleep(4 * time.Second)
	if idx.Synced() {
		t.Error("the index synced without permission to list ResourceSlices")
	}
	w := warnings.all()
	if len(w) != 1 || !strings.Contains(w[0], "resourceslices") || !strings.Contains(w[0], "forbidden") {
		t.Errorf("warnings = %q, want one saying resourceslices are forbidden", w)
	}
}
