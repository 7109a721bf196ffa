package manifest

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/quota"
	"github.com/gpulens/gpulens/analyzer/report"
)

// crb is a label value, as a pod label backfilled into a store could hold
// one, that once turned 'recommend --format yaml' into a ClusterRoleBinding
// to cluster-admin: the value was printed raw into a "# " comment.
const crb = "x\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: pwn\n" +
	"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: User, name: eve}]\n"

// leanOutputs are the YAML the lean packages still write themselves.
func leanOutputs(t testing.TB, v string) map[string][]byte {
	fs, p, advice := adviceOf(v)
	out := map[string][]byte{}
	var buf bytes.Buffer
	if err := report.WriteRecommendations(&buf, fs, "yaml"); err != nil {
		t.Fatal(err)
	}
	out["report"] = bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := plan.Write(&buf, p, "yaml"); err != nil {
		t.Fatal(err)
	}
	out["plan-text"] = bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := quota.Write(&buf, advice, nil, "yaml"); err != nil {
		t.Fatal(err)
	}
	out["quota-text"] = bytes.Clone(buf.Bytes())
	return out
}

// sameShapes fails where an output of v has other documents than the same
// output of a plain name.
func sameShapes(t testing.TB, v string) {
	t.Helper()
	want := outputs(t, "team-a")
	for k, b := range leanOutputs(t, "team-a") {
		want[k] = b
	}
	got := outputs(t, v)
	for k, b := range leanOutputs(t, v) {
		got[k] = b
	}
	for name, b := range got {
		if g, w := shape(t, b), shape(t, want[name]); !slices.Equal(g, w) {
			t.Errorf("%s of %q: documents\n%v\nwant\n%v\n%s", name, v, g, w, b)
		}
	}
}

func TestLabelInjectionRegression(t *testing.T) {
	sameShapes(t, crb)
	for name, b := range outputs(t, crb) {
		if strings.Contains(string(b), "\nkind: ClusterRoleBinding") {
			t.Errorf("%s carries a ClusterRoleBinding:\n%s", name, b)
		}
	}
	want := outputs(t, "team-a")
	// Four resized, the Job's release (the others' merged with their
	// resizing), the time-sliced Deployment, its ConfigMap, the DRA
	// claim template and its patch: the Job's and the pod's resizing are
	// comments, for their manifests.
	if n := len(shape(t, want["recommend"])); n != 9 {
		t.Errorf("the fixture's recommend stream has %d objects, want 9:\n%s", n, want["recommend"])
	}
}

// FuzzLabelYAML feeds arbitrary label values through recommend's, plan's
// and quota's YAML (the objects, the kustomize directory and the lean
// packages' text): the kinds and number of documents never change.
func FuzzLabelYAML(f *testing.F) {
	for _, s := range []string{crb, "a\r\nkind: Secret", "a\u0085kind: Secret", "a\u2028---\u2029b", "a: b", "- x", "'\"", "#", "\x00\x1b[2J", "\xff\xfe",
		"{{ .x }}", "&anchor *alias", "!!binary", "--- |", "... ", strings.Repeat("x", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		sameShapes(t, v)
	})
}
