package podresourcestest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	v1 "k8s.io/kubelet/pkg/apis/podresources/v1"
)

// Source returns the answers for List and GetAllocatableResources. A nil
// answer is served as an empty response, as a kubelet without GPU pods would.
type Source func() (*v1.ListPodResourcesResponse, *v1.AllocatableResourcesResponse)

// Serve listens on socketPath and answers from src until stop is called.
// Like the kubelet it replaces a stale socket file left by a previous run;
// stop removes the socket so clients see the same "no such file" a node
// without a running kubelet shows.
func Serve(socketPath string, src Source) (stop func(), err error) {
	if err := removeStaleSocket(socketPath); err != nil {
		return nil, err
	}
	lis, err := net.Listen("unix", socketPath)
	if err != nil {
		return nil, fmt.Errorf("listen on pod-resources socket %q: %w", socketPath, err)
	}
	srv := grpc.NewServer()
	v1.RegisterPodResourcesListerServer(srv, &lister{src: src})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Serve only returns after Stop here; its error then says nothing.
		_ = srv.Serve(lis)
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			srv.Stop()
			<-done
			_ = os.Remove(socketPath)
		})
	}, nil
}

// removeStaleSocket deletes a leftover socket but refuses to delete any other
// kind of file, which would be a misconfigured path rather than a leftover.
func removeStaleSocket(path string) error {
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("stat pod-resources socket %q: %w", path, err)
	}
	if info.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("pod-resources socket path %q exists and is not a socket (%s)", path, info.Mode().Type())
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale pod-resources socket %q: %w", path, err)
	}
	return nil
}

// lister implements the pod-resources v1 service over a Source.
type lister struct {
	v1.UnimplementedPodResourcesListerServer
	src Source
}

func (l *lister) List(context.Context, *v1.ListPodResourcesRequest) (*v1.ListPodResourcesResponse, error) {
	resp, _ := l.src()
	if resp == nil {
		resp = &v1.ListPodResourcesResponse{}
	}
	return resp, nil
}

func (l *lister) GetAllocatableResources(context.Context, *v1.AllocatableResourcesRequest) (*v1.AllocatableResourcesResponse, error) {
	_, alloc := l.src()
	if alloc == nil {
		alloc = &v1.AllocatableResourcesResponse{}
	}
	return alloc, nil
}

// Server is a kubelet stand-in for tests whose answers and lifetime the test
// controls.
type Server struct {
	t      testing.TB
	socket string

	mu    sync.Mutex
	resp  *v1.ListPodResourcesResponse
	alloc *v1.AllocatableResourcesResponse
	stop  func()

	calls atomic.Int64
}

// Start serves resp and alloc on socketPath until the test ends. It fails
// the test if the socket cannot be created.
func Start(t testing.TB, socketPath string, resp *v1.ListPodResourcesResponse, alloc *v1.AllocatableResourcesResponse) *Server {
	t.Helper()
	s := &Server{t: t, socket: socketPath, resp: resp, alloc: alloc}
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// Socket returns the path the server listens on.
func (s *Server) Socket() string { return s.socket }

// Set replaces the answers; the next call sees them.
func (s *Server) Set(resp *v1.ListPodResourcesResponse, alloc *v1.AllocatableResourcesResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resp, s.alloc = resp, alloc
}

// Calls returns how many RPCs have been answered, so tests can wait for a
// client to come back without sleeping for a fixed time.
func (s *Server) Calls() int64 { return s.calls.Load() }

// Stop closes every connection and removes the socket, as a crashed kubelet
// leaves it. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Restart stops the server if it runs, deletes the socket and creates a new
// one at the same path, as a kubelet restart does; existing client
// connections break and have to reconnect. Like Start it must be called
// from the test's goroutine, since it fails the test on error.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

func (s *Server) start() {
	s.t.Helper()
	stop, err := Serve(s.socket, s.answers)
	if err != nil {
		s.t.Fatalf("start pod-resources server: %v", err)
	}
	s.mu.Lock()
	s.stop = stop
	s.mu.Unlock()
}

func (s *Server) answers() (*v1.ListPodResourcesResponse, *v1.AllocatableResourcesResponse) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls.Add(1)
	return s.resp, s.alloc
}

// Claim is a container's entry for one ResourceClaim as the kubelet lists it
// in ContainerResources.DynamicResources: devices are "pool/device" pairs
// of driver's ResourceSlices.
func Claim(namespace, name, driver string, devices ...string) *v1.DynamicResource {
	dr := &v1.DynamicResource{ClaimNamespace: namespace, ClaimName: name}
	for _, d := range devices {
		pool, device, _ := strings.Cut(d, "/")
		dr.ClaimResources = append(dr.ClaimResources, &v1.ClaimResource{
			DriverName: driver, PoolName: pool, DeviceName: device,
			// The kubelet passes on the CDI devices the driver prepared;
			// the NVIDIA driver names them after the claim.
			CdiDevices: []*v1.CDIDevice{{Name: "k8s." + driver + "/claim=" + name + "-" + device}},
		})
	}
	return dr
}
