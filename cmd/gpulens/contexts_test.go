package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

const fleetKubeconfig = "../../analyzer/inventory/kube/testdata/kubeconfig-fleet.yaml"

func hideKubernetes(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "absent"))
}

// TestContextFlagErrors: a context the kubeconfig lacks, a cluster value
// given twice or a kubeconfig that is not there is a usage error (exit 2)
// that names the flag and the kubeconfig, before any query.
func TestContextFlagErrors(t *testing.T) {
	hideKubernetes(t)
	dir := fixtureDir(t)
	base := []string{"report", "--data-dir", dir, "--since", "1h", "--until", fixtureUntil, "--kubeconfig", fleetKubeconfig}
	for _, c := range []struct {
		name    string
		args    []string
		mention []string
	}{
		{"unknown context", []string{"--context", "east", "--context", "prod"}, []string{"--context:", `"prod"`, fleetKubeconfig, "east, lab=b, west"}},
		{"one cluster value twice", []string{"--context", "east=eu", "--context", "west=eu"}, []string{"--context:", `"eu"`}},
		{"no cluster value", []string{"--context", "east="}, []string{"--context:", "empty cluster value"}},
		{"with --no-kubernetes", []string{"--context", "east", "--no-kubernetes"}, []string{"--no-kubernetes", "exclusive"}},
		{"all contexts of no kubeconfig", []string{"--all-contexts", "--kubeconfig", "testdata/no-such-kubeconfig"}, []string{"--all-contexts:", "testdata/no-such-kubeconfig"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := execute(append(append([]string{}, base...), c.args...), &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, stderr.String())
			}
			for _, m := range c.mention {
				if !strings.Contains(stderr.String(), m) {
					t.Errorf("stderr %q lacks %s", stderr.String(), m)
				}
			}
		})
	}
}

// TestReportOfTwoClusters: a report over two contexts, one unreachable,
// is made; the report names the cluster that could not
// be read, and the one whose inventory results were joined with.
func TestReportOfTwoClusters(t *testing.T) {
	hideKubernetes(t)
	empty := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "/configmaps/") || strings.HasPrefix(r.URL.Path, "/apis/kueue.x-k8s.io/") ||
			strings.HasPrefix(r.URL.Path, "/apis/resource.k8s.io/") {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
			return
		}
		_, _ = w.Write([]byte(`{"metadata":{},"items":[]}`))
	}))
	defer empty.Close()
	kc, err := clientcmd.LoadFromFile(fleetKubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kc.Clusters["east"].Server, kc.Clusters["west"].Server = empty.URL, "https://127.0.0.1:1"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := execute([]string{"report", "--data-dir", fixtureDir(t), "--since", "7d", "--until", fixtureUntil,
		"--kubeconfig", path, "--context", "east=us-east", "--context", "west=us-west"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d; stderr %q", code, stderr.String())
	}
	// Words only: the table wraps its notes at 120 columns.
	words := strings.Join(strings.Fields(stdout.String()), " ")
	for _, want := range []string{"not read from cluster us-west (context west): kubernetes API unreachable", "joined with cluster us-east (context east)'s inventory only"} {
		if !strings.Contains(words, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout.String())
		}
	}
	// recommend prints findings only: the notes go to standard error.
	stdout.Reset()
	stderr.Reset()
	code = execute([]string{"recommend", "--data-dir", fixtureDir(t), "--since", "7d", "--until", fixtureUntil,
		"--kubeconfig", path, "--context", "east=us-east", "--context", "west=us-west"}, &stdout, &stderr)
	if code != exitOK || !strings.Contains(stderr.String(), "note: not read from cluster us-west (context west): kubernetes API unreachable") {
		t.Errorf("recommend exit %d, stderr %q: want the unread cluster noted", code, stderr.String())
	}
}

func TestContextFlagsHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"report", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--context stringArray", "CONTEXT=CLUSTER", "--all-contexts", "degrades only its own part"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
