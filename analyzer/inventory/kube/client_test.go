package kube

import (
	"errors"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

const unreachableKubeconfig = "testdata/kubeconfig-unreachable.yaml"

// noKubernetes hides any cluster the test host can reach.
func noKubernetes(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
}

func TestNewClientErrors(t *testing.T) {
	tests := []struct {
		name    string
		o       Options
		is      error
		mention string
	}{
		{name: "nothing configured", o: Options{}, is: ErrNoConfig},
		{name: "missing kubeconfig file", o: Options{Kubeconfig: "testdata/no-such-kubeconfig"}, mention: "testdata/no-such-kubeconfig"},
		{name: "unknown context", o: Options{Kubeconfig: unreachableKubeconfig, Context: "prod"}, mention: `"prod"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noKubernetes(t)
			c, err := NewClient(tt.o)
			if err == nil {
				t.Fatalf("NewClient = %v, want an error", c)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q, want %q", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("error %q does not mention %s", err, tt.mention)
			}
		})
	}
}

func TestNewClientFromKUBECONFIG(t *testing.T) {
	noKubernetes(t)
	abs, err := filepath.Abs(unreachableKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", abs)
	if _, err := NewClient(Options{}); err != nil {
		t.Errorf("NewClient with $KUBECONFIG set: %v", err)
	}
}

// blackHole accepts TCP connections and never answers, like an API server
// behind a firewall that drops packets after the handshake.
func blackHole(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "https://" + l.Addr().String()
}

// kubeconfigFor rewrites the testdata kubeconfig to point at server.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(unreachableKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Clusters["test-net"].Server = server
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadUnreachableHonoursTimeout(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	tests := []struct {
		name       string
		kubeconfig func(t *testing.T) string
	}{
		{"unrouted address", func(*testing.T) string { return unreachableKubeconfig }},
		{"server never answers", func(t *testing.T) string { return kubeconfigFor(t, blackHole(t)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := testOptions(t)
			o.Kubeconfig, o.Timeout = tt.kubeconfig(t), timeout
			c, err := NewClient(o)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			inv := Read(t.Context(), c, o)
			// One request's worth, not one per resource.
			if elapsed := time.Since(start); elapsed > 2*timeout {
				t.Errorf("Read took %v with Timeout %v", elapsed, timeout)
			}
			if inv.Available {
				t.Error("Available = true")
			}
			if len(inv.Skipped) != 1 || !strings.HasPrefix(inv.Skipped[0], "kubernetes API unreachable: ") {
				t.Errorf("Skipped = %q, want one unreachable entry", inv.Skipped)
			}
		})
	}
}
