package chart

import (
	"os"
	"strings"
	"testing"
)

// manifestsPath is the chart rendered with default values, committed for
// users without helm and read by the main module's tests (deploy/,
// e2e/kube).
const manifestsPath = "../../deploy/manifests/gpulens.yaml"

// TestManifestsCurrent fails when deploy/manifests/gpulens.yaml is not
// what the chart renders today.
func TestManifestsCurrent(t *testing.T) {
	manifest, err := Render(chartDir, Release{})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultHeader + manifest
	got, err := os.ReadFile(manifestsPath)
	if err != nil {
		t.Fatalf("%v: run make manifests", err)
	}
	if string(got) == want {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Fatalf("deploy/manifests/gpulens.yaml is stale: run make manifests\nline %d is   %q\nthe chart renders %q", i+1, gl, wl)
		}
	}
}
