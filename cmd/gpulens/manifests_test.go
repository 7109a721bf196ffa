package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// objectDocs decodes a YAML stream and fails on a document that is not an
// object with apiVersion, kind and metadata.name, or a kustomize patch with
// a target; it returns the kinds.
func objectDocs(t *testing.T, out []byte) []string {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(out))
	var kinds []string
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if err.Error() == "EOF" {
				return kinds
			}
			t.Fatalf("document %d does not parse: %v\n%s", len(kinds), err, out)
		}
		if doc == nil {
			continue
		}
		if target, ok := doc["target"].(map[string]any); ok && doc["patch"] != nil {
			kinds = append(kinds, "patch "+target["kind"].(string))
			continue
		}
		md, _ := doc["metadata"].(map[string]any)
		if doc["apiVersion"] == nil || doc["kind"] == nil || md["name"] == nil {
			t.Errorf("a document without apiVersion, kind or metadata.name: %v", doc)
			continue
		}
		kinds = append(kinds, doc["kind"].(string))
	}
}

func TestManifestOutputs(t *testing.T) {
	dir := demoTSDB(t)
	for _, tt := range []struct {
		name string
		args []string
		kind string // one of the kinds it must write
	}{
		{"recommend", recommendArgs(dir, "-o", "yaml"), ""},
		{"plan", planArgs(dir, "-o", "yaml"), "ConfigMap"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := execute(tt.args, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			kinds := objectDocs(t, stdout.Bytes())
			if tt.kind != "" && !strings.Contains(strings.Join(kinds, " "), tt.kind) {
				t.Errorf("kinds %v, want a %s:\n%s", kinds, tt.kind, stdout.String())
			}
			if !strings.HasPrefix(stdout.String(), "#") && len(kinds) == 0 {
				t.Errorf("neither objects nor words:\n%s", stdout.String())
			}
		})
	}
}

func TestKustomizeOutput(t *testing.T) {
	dir := demoTSDB(t)
	out := filepath.Join(t.TempDir(), "advice")
	var stdout, stderr bytes.Buffer
	if code := execute(planArgs(dir, "-o", "kustomize", "--output-dir", out), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "kubectl apply -k "+out) {
		t.Errorf("stdout %q does not say how to apply it", stdout.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Kind      string   `yaml:"kind"`
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil || k.Kind != "Kustomization" || len(k.Resources) == 0 {
		t.Fatalf("kustomization.yaml %+v (%v):\n%s", k, err, b)
	}
	for _, r := range k.Resources {
		res, err := os.ReadFile(filepath.Join(out, r))
		if err != nil {
			t.Fatalf("resource %s: %v", r, err)
		}
		objectDocs(t, res)
	}
}

func TestManifestFlags(t *testing.T) {
	dir := demoTSDB(t)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"kustomize without a directory", recommendArgs(dir, "-o", "kustomize"), "--output-dir"},
		{"a directory without kustomize", recommendArgs(dir, "--output-dir", t.TempDir()), "only -o kustomize"},
		{"kustomize and a file", quotaArgsFor(dir, "-o", "kustomize", "--output-dir", t.TempDir(), "--output-file", "x.yaml"), "--output-file:"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := execute(tt.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, stderr.String(), exitUsage, tt.want)
			}
		})
	}
}

func quotaArgsFor(dir string, extra ...string) []string {
	return append([]string{"quota", "--data-dir", dir, "--since", "6h", "--until", "2026-01-05T14:00:00Z", "--no-kubernetes"}, extra...)
}
