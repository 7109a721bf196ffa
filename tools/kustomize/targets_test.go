package kustomize

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/manifest"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// advice is what gpulens recommends for the hostile names of
// testdata/workloads.yaml: release the StatefulSet data/.* (its pod's
// label read ".*-0") and .*/w, and move llama3.1-serve and a+b from a
// whole GPU to a 3g.40gb MIG slice; and move serving/embedder, whose
// GPU container is not in the data, to a smaller slice, which no patch
// can say.
func advice() []findings.Finding {
	finding := func(r *recommend.Recommendation) findings.Finding {
		return findings.Finding{Namespace: r.Workload.Namespace, Workload: r.Workload.Name, WorkloadKind: r.Workload.Kind,
			Summary: "test", Recommendation: r}
	}
	toMIG := recommend.PatchChange{Limits: map[vocab.Resource]int64{"nvidia.com/mig-3g.40gb": 1}, Remove: []vocab.Resource{"nvidia.com/gpu"}}
	resize := func(w workload.Ref) findings.Finding {
		return finding(&recommend.Recommendation{Action: recommend.ActionMIGProfile, Workload: w, Patch: recommend.BuildPatch(w, toMIG)})
	}
	release := func(w workload.Ref) findings.Finding {
		return finding(&recommend.Recommendation{Action: recommend.ActionRelease, Workload: w})
	}
	return []findings.Finding{
		release(workload.Ref{Kind: "StatefulSet", Namespace: "data", Name: ".*", Container: "notebook"}),
		release(workload.Ref{Kind: "StatefulSet", Namespace: ".*", Name: "w", Container: "w"}),
		resize(workload.Ref{Kind: "Deployment", Namespace: "serving", Name: "llama3.1-serve", Container: "server"}),
		resize(workload.Ref{Kind: "Deployment", Namespace: "ml", Name: "a+b", Container: "trainer"}),
		finding(recommend.RightSize(recommend.Usage{Workload: embedder, Model: "NVIDIA H100 80GB HBM3", Sharing: "none", Share: 1,
			P95Utilization: 0.01, P99MemoryBytes: 1 << 30}, criteria.DefaultPolicy())),
	}
}

// embedder is a workload whose GPU container is not in the data.
var embedder = workload.Ref{Kind: "Deployment", Namespace: "serving", Name: "embedder"}

type id struct{ kind, namespace, name string }

// TestHostileNamesPatchOnlyTheirTargets renders gpulens's kustomize
// directory, with the workloads' manifests added to its resources as the
// README says, through kustomize itself (krusty, as `kubectl kustomize`
// does), and compares every object with the workloads rendered without
// the advice: the advised ones change as advised, every other is the same
// byte for byte. Kustomize reads a patch target's name and namespace as
// anchored regular expressions (sigs.k8s.io/kustomize/api v0.21.2
// types/selector.go, NewSelectorRegex and anchorRegex; resmap/reswrangler.go,
// (*resWrangler).Select). At main 36bc8ff the targets were the raw names:
// the release of data/.* scaled kafka (5) and postgres-primary (3) and w
// to 0, the release of .*/w every StatefulSet named w in any namespace,
// "llama3.1-serve" also patched llama3x1-serve, and "a+b" patched aab and
// not itself (kustomize says nothing of a target that selects nothing).
// serving/embedder's GPU container is not in the data: at main its patch
// named a container "main", which the strategic merge added to the pod
// (containers merge by name); now it is not patched, and the
// kustomization's head says which field to change.
func TestHostileNamesPatchOnlyTheirTargets(t *testing.T) {
	workloads, err := os.ReadFile(filepath.Join("testdata", "workloads.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fSys := filesys.MakeFsInMemory()
	write := func(path string, b []byte) {
		t.Helper()
		if err := fSys.WriteFile(path, b); err != nil {
			t.Fatal(err)
		}
	}

	// The workloads alone.
	write("/base/workloads.yaml", workloads)
	write("/base/kustomization.yaml", []byte("resources:\n- workloads.yaml\n"))
	before := render(t, fSys, "/base")

	// gpulens's directory, with the workloads added to its resources.
	out := t.TempDir()
	files, err := manifest.WriteKustomize(out, manifest.FromFindings(advice()), "nothing")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(out, f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.ToSlash(filepath.Join("/advice", rel)), b)
	}
	kb, err := fSys.ReadFile("/advice/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := "containers[<the GPU container>].resources.limits[nvidia.com/mig-1g.10gb] to 1"; !strings.Contains(string(kb), want) {
		t.Errorf("kustomization.yaml does not say %q for %s:\n%s", want, embedder, kb)
	}
	var k map[string]any
	if err := yaml.Unmarshal(kb, &k); err != nil {
		t.Fatal(err)
	}
	res, _ := k["resources"].([]any)
	k["resources"] = append([]any{"workloads.yaml"}, res...)
	kb, err = yaml.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	write("/advice/kustomization.yaml", kb)
	write("/advice/workloads.yaml", workloads)
	after := render(t, fSys, "/advice")

	changed := map[id]func(t *testing.T, obj map[string]any){
		{"StatefulSet", "data", ".*"}:               wantReplicas(0),
		{"StatefulSet", ".*", "w"}:                  wantReplicas(0),
		{"Deployment", "serving", "llama3.1-serve"}: wantMIG("server", 2),
		{"Deployment", "ml", "a+b"}:                 wantMIG("trainer", 1),
	}
	if len(after) != len(before) {
		t.Errorf("%d objects rendered with the advice, %d without", len(after), len(before))
	}
	for key, was := range before {
		now, ok := after[key]
		if !ok {
			t.Errorf("%v: gone with the advice", key)
			continue
		}
		check, target := changed[key]
		if !target {
			if now != was {
				t.Errorf("%v, a bystander, changed:\n%s\nwas:\n%s", key, now, was)
			}
			continue
		}
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(now), &obj); err != nil {
			t.Fatal(err)
		}
		t.Run(key.namespace+"/"+key.name, func(t *testing.T) { check(t, obj) })
	}
}

// render builds dir as `kubectl kustomize dir` does; each object's YAML
// by its kind, namespace and name.
func render(t *testing.T, fSys filesys.FileSystem, dir string) map[id]string {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fSys, dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	return byID(t, m)
}

func byID(t *testing.T, m resmap.ResMap) map[id]string {
	t.Helper()
	out := map[id]string{}
	for _, r := range m.Resources() {
		b, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		out[id{r.GetKind(), r.GetNamespace(), r.GetName()}] = string(b)
	}
	return out
}

func wantReplicas(n int) func(*testing.T, map[string]any) {
	return func(t *testing.T, obj map[string]any) {
		spec, _ := obj["spec"].(map[string]any)
		if got, ok := spec["replicas"].(float64); !ok || int(got) != n {
			t.Errorf("replicas %v, want %d", spec["replicas"], n)
		}
	}
}

// wantMIG: the container asks for one 3g.40gb slice and no whole GPU, and
// the pod keeps its n containers (a patch adds none).
func wantMIG(container string, n int) func(*testing.T, map[string]any) {
	return func(t *testing.T, obj map[string]any) {
		spec, _ := obj["spec"].(map[string]any)
		tmpl, _ := spec["template"].(map[string]any)
		pod, _ := tmpl["spec"].(map[string]any)
		cs, _ := pod["containers"].([]any)
		if len(cs) != n {
			t.Errorf("%d containers, want %d: %v", len(cs), n, cs)
		}
		for _, c := range cs {
			c, _ := c.(map[string]any)
			if c["name"] != container {
				continue
			}
			res, _ := c["resources"].(map[string]any)
			limits, _ := res["limits"].(map[string]any)
			if want := map[string]any{"nvidia.com/mig-3g.40gb": "1"}; !reflect.DeepEqual(limits, want) {
				t.Errorf("container %s limits %v, want %v", container, limits, want)
			}
			if req, _ := res["requests"].(map[string]any); req["nvidia.com/gpu"] != nil {
				t.Errorf("container %s still requests a whole GPU: %v", container, req)
			}
			return
		}
		t.Errorf("no container %s: %v", container, cs)
	}
}
