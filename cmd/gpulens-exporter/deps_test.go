package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The exporter's resident memory is mostly its binary's pages (see
// docs/BENCHMARKS.md, "Where the exporter's memory goes"), so what it links
// is a memory budget.

// maxBinaryBytes is issue 12's goal for the plain `go build` binary.
const maxBinaryBytes = 40_000_000

// TestBinarySize checks the binary TestMain built.
func TestBinarySize(t *testing.T) {
	fi, err := os.Stat(exporterBin)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() >= maxBinaryBytes {
		t.Errorf("gpulens-exporter is %d bytes, want under %d", fi.Size(), maxBinaryBytes)
	}
}

// TestLinksNoAPIGroups guards the narrow Kubernetes dependency: the pod
// informer decodes into podindex's own cut-down types through a core/v1 REST
// client, so neither k8s.io/api (every API group's generated code) nor
// client-go's typed clientsets, informers and fakes belong in the binary.
func TestLinksNoAPIGroups(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"k8s.io/api/",
		"k8s.io/client-go/kubernetes",
		"k8s.io/client-go/informers",
		"k8s.io/client-go/listers",
		"k8s.io/client-go/applyconfigurations",
		"net/http/pprof",
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f) && (strings.HasSuffix(f, "/") || strings.HasPrefix(pkg, f+"/")) {
				t.Errorf("the exporter links %s", pkg)
			}
		}
	}
}
