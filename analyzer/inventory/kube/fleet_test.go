package kube

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

const fleetKubeconfig = "testdata/kubeconfig-fleet.yaml"

func TestResolveMembers(t *testing.T) {
	noKubernetes(t)
	o := Options{Kubeconfig: fleetKubeconfig}
	for _, c := range []struct {
		name  string
		specs []string
		all   bool
		want  []inventory.Member
	}{
		{"one context", []string{"east"}, false, []inventory.Member{{Context: "east", Cluster: "east"}}},
		{"mapped", []string{"east=us-east-1", "west"}, false, []inventory.Member{{Context: "east", Cluster: "us-east-1"}, {Context: "west", Cluster: "west"}}},
		{"a context named with =", []string{"lab=b"}, false, []inventory.Member{{Context: "lab=b", Cluster: "lab=b"}}},
		{"a context named with =, mapped", []string{"lab=b=lab"}, false, []inventory.Member{{Context: "lab=b", Cluster: "lab"}}},
		{"all: the current first", nil, true, []inventory.Member{{Context: "west", Cluster: "west"}, {Context: "east", Cluster: "east"}, {Context: "lab=b", Cluster: "lab=b"}}},
		{"all, one renamed", []string{"lab=b=lab"}, true, []inventory.Member{{Context: "west", Cluster: "west"}, {Context: "east", Cluster: "east"}, {Context: "lab=b", Cluster: "lab"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ResolveMembers(o, c.specs, c.all)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("members %v, want %v", got, c.want)
			}
		})
	}
}

func TestResolveMembersErrors(t *testing.T) {
	noKubernetes(t)
	o := Options{Kubeconfig: fleetKubeconfig}
	for _, c := range []struct {
		name    string
		o       Options
		specs   []string
		mention []string
	}{
		{"unknown context", o, []string{"east", "prod"}, []string{`"prod"`, fleetKubeconfig, "east, lab=b, west"}},
		{"unknown mapped context", o, []string{"prod=eu"}, []string{`"prod"`, fleetKubeconfig}},
		{"one cluster value twice", o, []string{"east=eu", "west=eu"}, []string{`"east"`, `"west"`, `"eu"`}},
		{"one context twice", o, []string{"east", "east=eu"}, []string{`"east" given twice`}},
		{"empty cluster value", o, []string{"east="}, []string{"empty cluster value"}},
		{"no context", o, []string{"=eu"}, []string{"names no context"}},
		{"missing kubeconfig", Options{Kubeconfig: "testdata/no-such-kubeconfig"}, []string{"east"}, []string{"testdata/no-such-kubeconfig"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := ResolveMembers(c.o, c.specs, false)
			if err == nil {
				t.Fatalf("members %v, want an error", m)
			}
			for _, s := range c.mention {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %s", err, s)
				}
			}
		})
	}
}

// fakeAPIServer answers the inventory's requests as an API server with one
// GPU node of the given name and nothing else would; every request is
// counted, and the bearer token checked, so that each cluster is seen to
// be read with its own credentials.
type fakeAPIServer struct {
	node     string
	token    string
	delay    time.Duration
	inFlight *atomic.Int64
	maxSeen  *atomic.Int64
}

func (s fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.inFlight != nil {
		n := s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		for m := s.maxSeen.Load(); n > m && !s.maxSeen.CompareAndSwap(m, n); m = s.maxSeen.Load() {
		}
	}
	time.Sleep(s.delay)
	w.Header().Set("Content-Type", "application/json")
	if r.Header.Get("Authorization") != "Bearer "+s.token {
		writeStatus(w, apierrors.NewUnauthorized("wrong token"))
		return
	}
	switch {
	case r.URL.Path == "/api/v1/nodes":
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: s.node, Labels: map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}}}
		n.Status.Capacity = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}
		_ = json.NewEncoder(w).Encode(corev1.NodeList{TypeMeta: metav1.TypeMeta{Kind: "NodeList", APIVersion: "v1"}, Items: []corev1.Node{n}})
	case strings.HasPrefix(r.URL.Path, "/api/v1/namespaces/gpu-operator/configmaps/"):
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, filepath.Base(r.URL.Path)))
	case r.URL.Path == "/apis/kueue.x-k8s.io/v1beta2", strings.HasPrefix(r.URL.Path, "/apis/resource.k8s.io/"):
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{}, r.URL.Path))
	default:
		// Every other list is empty.
		_, _ = w.Write([]byte(`{"metadata":{},"items":[]}`))
	}
}

func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.Kind, st.APIVersion = "Status", "v1"
	w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(w).Encode(st)
}

// fleetKubeconfigFor rewrites the fleet kubeconfig's servers.
func fleetKubeconfigFor(t *testing.T, servers map[string]string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(fleetKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for name, url := range servers {
		cfg.Clusters[name].Server = url
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadFleetDegradesOnlyTheUnreachable: of three clusters, the one whose
// API server refuses connections is Unavailable with its reason, and the
// others are read whole, each through its own context's server and token.
func TestReadFleetDegradesOnlyTheUnreachable(t *testing.T) {
	noKubernetes(t)
	east := httptest.NewTLSServer(fakeAPIServer{node: "east-gpu-0", token: "east-token"})
	defer east.Close()
	lab := httptest.NewTLSServer(fakeAPIServer{node: "lab-gpu-0", token: "lab-token"})
	defer lab.Close()
	o := testOptions(t)
	o.Kubeconfig = fleetKubeconfigFor(t, map[string]string{"east": east.URL, "west": "https://127.0.0.1:1", "lab": lab.URL})
	o.Timeout = 10 * time.Second
	members, err := ResolveMembers(o, []string{"west=us-west", "east=us-east", "lab=b"}, false)
	if err != nil {
		t.Fatal(err)
	}
	f := ReadFleet(t.Context(), o, members, 0)
	if f.Len() != 3 {
		t.Fatalf("%d clusters, want 3", f.Len())
	}
	for cluster, node := range map[string]string{"us-east": "east-gpu-0", "lab=b": "lab-gpu-0"} {
		inv := f.For(cluster)
		if inv == nil || !inv.Available || len(inv.Skipped) != 0 {
			t.Fatalf("cluster %s: %+v, want a whole inventory", cluster, inv)
		}
		if _, ok := inv.Nodes[node]; !ok || len(inv.Nodes) != 1 {
			t.Errorf("cluster %s nodes %v, want only %s: each cluster is read through its own context", cluster, inv.Nodes, node)
		}
	}
	west := f.For("us-west")
	if west == nil || west.Available || len(west.Skipped) != 1 ||
		!strings.HasPrefix(west.Skipped[0], "kubernetes API unreachable: ") || !strings.Contains(west.Skipped[0], "127.0.0.1:1") {
		t.Fatalf("cluster us-west: %+v, want inventory.Unavailable, unreachable at 127.0.0.1:1", west)
	}
	if f.For("west") != nil {
		t.Error("For(context name) of a renamed cluster is not nil: clusters are looked up by their label value")
	}
	unread := f.Unread()
	if len(unread) != 1 || !strings.HasPrefix(unread[0], "cluster us-west (context west): kubernetes API unreachable: ") {
		t.Errorf("Unread = %q, want the one unreachable cluster, named with its context", unread)
	}
	if m, inv := f.Primary(); m.Cluster != "us-east" || inv != f.For("us-east") {
		t.Errorf("Primary = %v, want us-east: the first cluster given that could be read", m)
	}
}

// TestReadFleetOwnCredentials: a context whose token the server refuses
// degrades only its cluster (every list unauthorized), not the others that
// share the server under their own users.
func TestReadFleetOwnCredentials(t *testing.T) {
	noKubernetes(t)
	srv := httptest.NewTLSServer(fakeAPIServer{node: "shared-gpu-0", token: "east-token"})
	defer srv.Close()
	o := testOptions(t)
	o.Kubeconfig = fleetKubeconfigFor(t, map[string]string{"east": srv.URL, "west": srv.URL})
	f := ReadFleet(t.Context(), o, []inventory.Member{{Context: "east", Cluster: "east"}, {Context: "west", Cluster: "west"}}, 0)
	if inv := f.For("east"); !inv.Available || len(inv.Skipped) != 0 || len(inv.Nodes) != 1 {
		t.Errorf("east: %+v, want whole", inv)
	}
	west := f.For("west")
	if len(west.Nodes) != 0 || len(west.Skipped) == 0 {
		t.Fatalf("west: %+v, want nothing read", west)
	}
	for _, sk := range west.Skipped {
		if !strings.Contains(sk, "unauthorized") {
			t.Errorf("west skipped %q, want unauthorized", sk)
		}
	}
}

// TestReadFleetBound: no more than parallel clusters are read at once, and
// they are read concurrently up to that bound.
func TestReadFleetBound(t *testing.T) {
	noKubernetes(t)
	for _, parallel := range []int{1, 2} {
		var inFlight, maxSeen atomic.Int64
		servers := map[string]string{}
		for _, name := range []string{"east", "west", "lab"} {
			srv := httptest.NewTLSServer(fakeAPIServer{node: name, token: name + "-token", delay: 20 * time.Millisecond, inFlight: &inFlight, maxSeen: &maxSeen})
			defer srv.Close()
			servers[name] = srv.URL
		}
		o := testOptions(t)
		o.Kubeconfig = fleetKubeconfigFor(t, servers)
		f := ReadFleet(t.Context(), o, []inventory.Member{{Context: "east", Cluster: "east"}, {Context: "west", Cluster: "west"}, {Context: "lab=b", Cluster: "lab"}}, parallel)
		for _, m := range f.Members {
			if !f.For(m.Cluster).Available {
				t.Errorf("parallel %d: %s not read: %q", parallel, m, f.For(m.Cluster).Skipped)
			}
		}
		if got := maxSeen.Load(); got != int64(parallel) {
			t.Errorf("parallel %d: %d requests at once, want %d (one at a time per cluster)", parallel, got, parallel)
		}
	}
}

// TestReadFleetBadContextClient: a context whose client cannot be built
// is its cluster's Unavailable inventory, the reason kept.
func TestReadFleetBadContextClient(t *testing.T) {
	noKubernetes(t)
	o := testOptions(t)
	o.Kubeconfig = fleetKubeconfig
	f := ReadFleet(t.Context(), o, []inventory.Member{{Context: "gone", Cluster: "gone"}}, 0)
	if inv := f.For("gone"); inv.Available || len(inv.Skipped) != 1 || !strings.Contains(inv.Skipped[0], `"gone"`) {
		t.Errorf("gone: %+v, want inventory.Unavailable naming the context", inv)
	}
}
