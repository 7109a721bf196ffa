package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/tools/chart"
)

// TestRun: what `make manifests` writes is the header and the default
// render; with a values file there is no header claiming default values.
func TestRun(t *testing.T) {
	const chartDir = "../../../../deploy/helm/gpulens"
	dir := t.TempDir()
	out := filepath.Join(dir, "gpulens.yaml")
	if err := run(chartDir, out, "", chart.Release{Name: "gpulens", Namespace: "gpulens"}); err != nil {
		t.Fatal(err)
	}
	want, err := chart.Render(chartDir, chart.Release{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(out); string(got) != chart.DefaultHeader+want {
		t.Errorf("%s is not the header and the default render", out)
	}

	values := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(values, []byte("analyzer: {enabled: false}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(chartDir, out, values, chart.Release{Name: "gpulens", Namespace: "gpulens"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if strings.HasPrefix(string(got), chart.DefaultHeader) || strings.Contains(string(got), "gpulens-analyzer") {
		t.Errorf("with %s (analyzer off): header or analyzer objects in the output", values)
	}
	if err := os.WriteFile(values, []byte("analyzer: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(chartDir, out, values, chart.Release{}); err == nil || !strings.Contains(err.Error(), values) {
		t.Errorf("a broken values file: error %v, want one naming %s", err, values)
	}
}
