package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

func TestPatchDoc(t *testing.T) {
	resize := recommend.PatchChange{Limits: map[vocab.Resource]int64{"nvidia.com/mig-1g.10gb": 1}, Remove: []vocab.Resource{"nvidia.com/gpu", "nvidia.com/mig-1g.10gb"}}
	for _, tt := range []struct {
		kind string
		// want is the document's YAML; empty for one said in comments.
		want string
	}{
		{"Deployment", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
      - name: main
        resources:
          limits:
            nvidia.com/gpu: null
            nvidia.com/mig-1g.10gb: "1"
          requests:
            nvidia.com/gpu: null
`},
		{"CronJob", `apiVersion: batch/v1
kind: CronJob
metadata:
  name: web
  namespace: shop
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: main
            resources:
              limits:
                nvidia.com/gpu: null
                nvidia.com/mig-1g.10gb: "1"
              requests:
                nvidia.com/gpu: null
`},
		{"Job", ""},
		{"Pod", ""},
		{"RayCluster", ""},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			w := workload.Ref{Kind: tt.kind, Namespace: "shop", Name: "web", Container: "main"}
			d := patchDoc(recommend.BuildPatch(w, resize))
			if tt.want == "" {
				if d.Object != nil || len(d.Comments) == 0 {
					t.Errorf("want words alone, got %+v", d)
				}
				return
			}
			if diff := cmp.Diff(tt.want, mustYAML(d.Object)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !d.Patch || d.Target.Kind != tt.kind || d.Target.Name != "web" || d.Target.Namespace != "shop" {
				t.Errorf("target %+v", d.Target)
			}
		})
	}
}

func TestReleaseDoc(t *testing.T) {
	for _, tt := range []struct{ kind, want string }{
		{"Deployment", "replicas: 0"},
		{"StatefulSet", "replicas: 0"},
		{"ReplicaSet", "replicas: 0"},
		{"Job", "suspend: true"},
		{"CronJob", "suspend: true"},
		{"Pod", "kubectl -n lab delete pod nb-0"},
		{"DaemonSet", "kubectl -n lab delete daemonset nb-0"},
	} {
		d := releaseDoc(workload.Ref{Kind: tt.kind, Namespace: "lab", Name: "nb-0"})
		got := strings.Join(d.Comments, "\n")
		if d.Object != nil {
			b, err := yaml.Marshal(d.Object)
			if err != nil {
				t.Fatal(err)
			}
			got = string(b)
			if strings.Contains(got, "selector") || strings.Contains(got, "template") {
				t.Errorf("%s: the release names more than it changes:\n%s", tt.kind, got)
			}
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q has no %q", tt.kind, got, tt.want)
		}
	}
}

func TestMergedOneDocumentPerObject(t *testing.T) {
	w := workload.Ref{Kind: "Deployment", Namespace: "shop", Name: "web", Container: "main"}
	docs := Merged([]Doc{
		patchDoc(recommend.BuildPatch(w, recommend.PatchChange{Limits: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}})),
		{Comments: []string{"words"}},
		patchDoc(recommend.BuildPatch(w, recommend.PatchChange{Env: map[string]string{"A": "1"}})),
		releaseDoc(w),
	})
	if len(docs) != 2 {
		t.Fatalf("%d documents, want the Deployment's one and the words", len(docs))
	}
	got := mustYAML(docs[0].Object)
	for _, want := range []string{"nvidia.com/gpu.shared", "name: A", "replicas: 0"} {
		if !strings.Contains(got, want) {
			t.Errorf("merged document has no %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "name: main") != 1 {
		t.Errorf("the container is not merged by name:\n%s", got)
	}
}

func TestFileName(t *testing.T) {
	for in, want := range map[string]string{
		"deployment-shop-web": "deployment-shop-web",
		"../../etc/passwd":    "etc-passwd",
		"a/b\\c\nd":           "a-b-c-d",
		"":                    "default",
		"..":                  "default",
	} {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestByHandIsWordsAlone: a recommendation whose container is not in the
// data (recommend.Recommendation.ByHand) is written as the words saying
// which field to change, with no object: at main 36bc8ff the patch named
// a container "main", which a strategic merge adds to the pod.
func TestByHandIsWordsAlone(t *testing.T) {
	w := workload.Ref{Kind: "StatefulSet", Namespace: "team-a", Name: "db"}
	ch := recommend.PatchChange{Limits: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}, Remove: []vocab.Resource{"nvidia.com/gpu"}}
	r := &recommend.Recommendation{Action: recommend.ActionTimeSlicing, Workload: w, Patch: recommend.BuildPatch(w, ch),
		ByHand: recommend.ContainerUnknown(w, ch), Sharing: &recommend.Sharing{Strategy: "time-slicing", Replicas: 4}, DevicePluginConfig: "version: v1\n"}
	docs := FromFindings([]findings.Finding{{Namespace: w.Namespace, Workload: w.Name, WorkloadKind: w.Kind, Summary: "share it", Recommendation: r}})
	said := false
	for _, d := range docs {
		if d.Patch || d.ManifestOnly != nil {
			t.Errorf("a patch without the container: %+v", d)
		}
		for _, c := range d.Comments {
			said = said || strings.Contains(c, "set spec.template.spec.containers[<the GPU container>].resources.limits[nvidia.com/gpu.shared] to 1")
		}
	}
	if !said {
		t.Errorf("no document says the field to change: %+v", docs)
	}
}
