package manifest

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gpulens/gpulens/analyzer/workload"
)

// TestTargetsAreLiteral guards the patch targets gpulens writes against
// names that are regular expressions to kustomize. Kustomize compiles a
// target's name and namespace as "^(?:" + field + ")$"
// (sigs.k8s.io/kustomize/api v0.21.2 types/selector.go, anchorRegex and
// NewSelectorRegex; resmap/reswrangler.go, Select): at main the name
// ".*-0" was written as is, and its release (replicas: 0) selected every
// StatefulSet of the namespace; "a+b" matched "aab" and not itself;
// "llama3.1-serve" matched "llama3x1-serve"; "+x" does not compile
// ("missing argument to repetition operator"), failing the whole build.
// Each target must be the
// quoted name, and, read as kustomize reads it, match the name alone.
// tools/kustomize renders the same with kustomize itself.
func TestTargetsAreLiteral(t *testing.T) {
	for _, tt := range []struct {
		ns, name string
		// wantNS, wantName are the fields as written: every RE2
		// metacharacter behind a backslash.
		wantNS, wantName string
		// bystanders are names the target must not select.
		bystanders []string
	}{
		{".*", ".*-0", `\.\*`, `\.\*-0`, []string{"kafka", "postgres-primary", "x-0"}},
		{"ml", "a+b", "ml", `a\+b`, []string{"aab", "ab"}},
		{"ml", "+x", "ml", `\+x`, []string{"x"}},
		{"serving", "llama3.1-serve", "serving", `llama3\.1-serve`, []string{"llama3x1-serve"}},
	} {
		w := workload.Ref{Kind: "StatefulSet", Namespace: tt.ns, Name: tt.name}
		docs := []Doc{releaseDoc(w)}
		dir := t.TempDir()
		if _, err := WriteKustomize(dir, docs, "nothing"); err != nil {
			t.Fatal(err)
		}
		b, err := readFile(filepath.Join(dir, "kustomization.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var k struct {
			Patches []struct {
				Target map[string]string
			}
		}
		if err := yaml.Unmarshal(b, &k); err != nil || len(k.Patches) != 1 {
			t.Fatalf("%s: kustomization.yaml %v:\n%s", tt.name, err, b)
		}
		got := k.Patches[0].Target
		if got["name"] != tt.wantName || got["namespace"] != tt.wantNS || got["kind"] != "StatefulSet" || got["group"] != "apps" {
			t.Errorf("%s: target %v, want name %q namespace %q", tt.name, got, tt.wantName, tt.wantNS)
		}
		// As kustomize's anchorRegex reads them.
		nameRE := regexp.MustCompile("^(?:" + got["name"] + ")$")
		nsRE := regexp.MustCompile("^(?:" + got["namespace"] + ")$")
		if !nameRE.MatchString(tt.name) || !nsRE.MatchString(tt.ns) {
			t.Errorf("%s: target %v does not select %s/%s", tt.name, got, tt.ns, tt.name)
		}
		for _, other := range tt.bystanders {
			if nameRE.MatchString(other) {
				t.Errorf("%s: target name %q also selects %s", tt.name, got["name"], other)
			}
			if nsRE.MatchString(other) {
				t.Errorf("%s: target namespace %q also selects namespace %s", tt.name, got["namespace"], other)
			}
		}
		// Read back into a Target (as e2e/kube does), the names again.
		var back struct{ Patches []struct{ Target Target } }
		if err := yaml.Unmarshal(b, &back); err != nil || back.Patches[0].Target != docs[0].Target {
			t.Errorf("%s: read back %+v (%v), want %+v", tt.name, back.Patches, err, docs[0].Target)
		}
	}
}

// TestJSONPatchTargetIsLiteral: the YAML stream's ClusterQueue entry (a
// kustomize patch with its target) quotes its name too; at main
// "gpu.queue" was written as a pattern matching "gpuXqueue".
func TestJSONPatchTargetIsLiteral(t *testing.T) {
	d := Doc{JSONPatch: []map[string]any{{"op": "replace", "path": "/spec/x", "value": "1"}},
		Target: Target{Group: "kueue.x-k8s.io", Version: "v1beta1", Kind: "ClusterQueue", Name: "gpu.queue"}}
	var buf bytes.Buffer
	if err := Write(&buf, []Doc{d}, "nothing"); err != nil {
		t.Fatal(err)
	}
	var e struct{ Target map[string]string }
	if err := yaml.Unmarshal(buf.Bytes(), &e); err != nil {
		t.Fatal(err)
	}
	if e.Target["name"] != `gpu\.queue` || e.Target["group"] != `kueue\.x-k8s\.io` || e.Target["namespace"] != "" {
		t.Errorf("target %v, want name gpu\\.queue, group kueue\\.x-k8s\\.io, no namespace", e.Target)
	}
}
