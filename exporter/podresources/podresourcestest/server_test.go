package podresourcestest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "prt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func list(t *testing.T, socket string) (*v1.ListPodResourcesResponse, error) {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return v1.NewPodResourcesListerClient(conn).List(ctx, &v1.ListPodResourcesRequest{})
}

func TestServeReplacesStaleSocket(t *testing.T) {
	socket := filepath.Join(shortDir(t), "kubelet.sock")
	// A socket file left behind by a crashed kubelet.
	lis, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	lis.(*net.UnixListener).SetUnlinkOnClose(false)
	lis.Close()

	want := &v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{{Namespace: "ns", Name: "p"}}}
	stop, err := Serve(socket, func() (*v1.ListPodResourcesResponse, *v1.AllocatableResourcesResponse) { return want, nil })
	if err != nil {
		t.Fatalf("Serve over a stale socket: %v", err)
	}
	got, err := list(t, socket)
	if err != nil || len(got.GetPodResources()) != 1 || got.GetPodResources()[0].GetName() != "p" {
		t.Fatalf("List = %v, %v; want pod ns/p", got, err)
	}
	stop()
	stop() // idempotent
	if _, err := os.Stat(socket); !os.IsNotExist(err) {
		t.Errorf("socket still present after stop: %v", err)
	}
}

func TestServeRefusesRegularFile(t *testing.T) {
	path := filepath.Join(shortDir(t), "kubelet.sock")
	if err := os.WriteFile(path, []byte("not a socket"), 0o600); err != nil {
		t.Fatal(err)
	}
	stop, err := Serve(path, func() (*v1.ListPodResourcesResponse, *v1.AllocatableResourcesResponse) { return nil, nil })
	if err == nil {
		stop()
		t.Fatal("Serve replaced a regular file")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
}

func TestServerSetAndNilAnswers(t *testing.T) {
	socket := filepath.Join(shortDir(t), "kubelet.sock")
	s := Start(t, socket, nil, nil)
	got, err := list(t, socket)
	if err != nil || len(got.GetPodResources()) != 0 {
		t.Fatalf("List with nil answer = %v, %v; want empty", got, err)
	}
	s.Set(&v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{{Name: "a"}, {Name: "b"}}}, nil)
	s.Restart()
	got, err = list(t, socket)
	if err != nil || len(got.GetPodResources()) != 2 {
		t.Fatalf("List after Set and Restart = %v, %v; want 2 pods", got, err)
	}
	if s.Calls() != 2 {
		t.Errorf("Calls() = %d, want 2", s.Calls())
	}
}

// TestServesDynamicResources: claims reach the client over the wire as the
// kubelet sends them, next to device-plugin devices of the same container.
func TestServesDynamicResources(t *testing.T) {
	socket := filepath.Join(shortDir(t), "kubelet.sock")
	Start(t, socket, &v1.ListPodResourcesResponse{PodResources: []*v1.PodResources{{
		Namespace: "ns", Name: "p",
		Containers: []*v1.ContainerResources{{
			Name:             "c",
			Devices:          []*v1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: []string{"GPU-a"}}},
			DynamicResources: []*v1.DynamicResource{Claim("ns", "gpus", "gpu.nvidia.com", "node-a/gpu-0", "node-a/gpu-1")},
		}},
	}}}, nil)
	got, err := list(t, socket)
	if err != nil {
		t.Fatal(err)
	}
	c := got.GetPodResources()[0].GetContainers()[0]
	if len(c.GetDevices()) != 1 {
		t.Errorf("device-plugin devices = %v, want GPU-a", c.GetDevices())
	}
	drs := c.GetDynamicResources()
	if len(drs) != 1 || drs[0].GetClaimNamespace() != "ns" || drs[0].GetClaimName() != "gpus" {
		t.Fatalf("dynamic resources = %v, want claim ns/gpus", drs)
	}
	var devices []string
	for _, cr := range drs[0].GetClaimResources() {
		if cr.GetDriverName() != "gpu.nvidia.com" {
			t.Errorf("driver = %q, want gpu.nvidia.com", cr.GetDriverName())
		}
		if len(cr.GetCdiDevices()) != 1 {
			t.Errorf("CDI devices of %s = %v, want one", cr.GetDeviceName(), cr.GetCdiDevices())
		}
		devices = append(devices, cr.GetPoolName()+"/"+cr.GetDeviceName())
	}
	if strings.Join(devices, ",") != "node-a/gpu-0,node-a/gpu-1" {
		t.Errorf("claim devices = %v, want node-a/gpu-0 and node-a/gpu-1", devices)
	}
}
