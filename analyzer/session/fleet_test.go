package session

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

const fleetKubeconfig = "../inventory/kube/testdata/kubeconfig-fleet.yaml"

// emptyCluster answers the inventory as an API server with nothing in it
// would: every list empty, no Kueue, no DRA API, no device plugin config.
func emptyCluster(t *testing.T) string {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "/configmaps/") || strings.HasPrefix(r.URL.Path, "/apis/kueue.x-k8s.io/") ||
			strings.HasPrefix(r.URL.Path, "/apis/resource.k8s.io/") {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		_, _ = w.Write([]byte(`{"metadata":{},"items":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// fleetKubeconfigFor is the fleet kubeconfig with its clusters' servers
// replaced.
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

func hideKubernetes(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
}

// TestSessionReadsEachCluster: with two contexts, the session keeps one
// inventory per cluster value; the unreachable cluster degrades only its
// own, and the analysis's notes name it, its context and why, and say
// which cluster's inventory the results were joined with.
func TestSessionReadsEachCluster(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	cfg := Config{DataDir: fixtureDir(t), Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd,
		Contexts: []string{"west=us-west", "east=us-east"}, ClusterLabel: "cluster"}
	cfg.Kubernetes.Kubeconfig = fleetKubeconfigFor(t, map[string]string{"east": emptyCluster(t), "west": "https://127.0.0.1:1"})
	cfg.Kubernetes.Timeout = 10 * time.Second
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f := s.Fleet()
	if f.Len() != 2 {
		t.Fatalf("%d clusters, want 2", f.Len())
	}
	if east := f.For("us-east"); east == nil || !east.Available || len(east.Skipped) != 0 {
		t.Errorf("us-east: %+v, want read whole", east)
	}
	if west := f.For("us-west"); west == nil || west.Available {
		t.Errorf("us-west: %+v, want Unavailable", west)
	}
	a, err := s.Analyze(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if a.Inventory == nil || !a.Inventory.Available {
		t.Error("the analysis was not joined with the reachable cluster's inventory")
	}
	joined := slices.IndexFunc(a.Notes, func(n string) bool {
		return strings.Contains(n, "inventories of 2 clusters read (us-west, us-east)") &&
			strings.Contains(n, "joined with cluster us-east (context east)'s inventory only") && strings.Contains(n, `carry no "cluster" label`)
	})
	unread := slices.IndexFunc(a.Notes, func(n string) bool {
		return strings.HasPrefix(n, "not read from cluster us-west (context west): kubernetes API unreachable: ") && strings.Contains(n, "127.0.0.1:1")
	})
	if joined < 0 || unread < 0 {
		t.Errorf("notes %q: want the joined cluster and the unreachable one, named", a.Notes)
	}
	if slices.ContainsFunc(a.Notes, func(n string) bool { return strings.HasPrefix(n, "no cluster access") }) {
		t.Errorf("notes %q say no cluster access, but us-east was read", a.Notes)
	}
	if !slices.Equal(s.ClusterNotes(), a.Notes[len(a.Notes)-1:]) {
		t.Errorf("ClusterNotes %q are not the analysis's last notes %q", s.ClusterNotes(), a.Notes)
	}
	p, err := s.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Notes, a.Notes[unread]) {
		t.Errorf("plan notes %q lack %q", p.Notes, a.Notes[unread])
	}
}

// TestSessionOneContext: one context is read as one cluster always was:
// no notes about clusters, its inventory joined.
func TestSessionOneContext(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	cfg := Config{DataDir: fixtureDir(t), Start: weekEnd.Add(-time.Hour), End: weekEnd, Contexts: []string{"east"}}
	cfg.Kubernetes.Kubeconfig = fleetKubeconfigFor(t, map[string]string{"east": emptyCluster(t)})
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Fleet().Len() != 1 || s.inv != s.Fleet().For("east") || !s.inv.Available {
		t.Errorf("fleet %v, inventory %+v: want cluster east's, read", s.Fleet().Members, s.inv)
	}
	if n := s.ClusterNotes(); len(n) != 0 {
		t.Errorf("ClusterNotes %q with one cluster", n)
	}
}

// TestSessionContextErrors: a context the kubeconfig lacks is an input
// error of the flag that named it, naming the kubeconfig, before anything
// is read.
func TestSessionContextErrors(t *testing.T) {
	hideKubernetes(t)
	ok := Config{DataDir: fixtureDir(t), Start: weekEnd.Add(-time.Hour), End: weekEnd}
	ok.Kubernetes.Kubeconfig = fleetKubeconfig
	for _, c := range []struct {
		name    string
		edit    func(*Config)
		input   string
		mention []string
	}{
		{"unknown context", func(c *Config) { c.Contexts = []string{"east", "prod"} }, InputContext, []string{`"prod"`, fleetKubeconfig}},
		{"one cluster twice", func(c *Config) { c.Contexts = []string{"east=eu", "west=eu"} }, InputContext, []string{`"eu"`}},
		{"all contexts without a kubeconfig", func(c *Config) { c.AllContexts, c.Kubernetes.Kubeconfig = true, "testdata/none" }, InputAllCtx, []string{"testdata/none"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := ok
			c.edit(&cfg)
			s, err := Open(context.Background(), cfg)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			var ie *InputError
			if !errors.As(err, &ie) || ie.Input != c.input {
				t.Fatalf("%v (%T), want an InputError of %s", err, err, c.input)
			}
			for _, m := range c.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q lacks %s", err, m)
				}
			}
		})
	}
}
