package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/quota"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// adviceOf is advice of every kind this package builds, with v in every
// place a store's label reaches: namespaces, workload, container and
// cluster names, summaries and notes.
func adviceOf(v string) ([]findings.Finding, *plan.Plan, []quota.Advice) {
	ref := func(kind string) workload.Ref {
		return workload.Ref{Cluster: v, Kind: kind, Namespace: "ns-" + v, Name: "w-" + v, Container: "c-" + v}
	}
	finding := func(r *recommend.Recommendation) findings.Finding {
		return findings.Finding{Cluster: v, Kind: "k", Namespace: r.Workload.Namespace, Workload: r.Workload.Name,
			WorkloadKind: r.Workload.Kind, Summary: "summary " + v, Recommendation: r}
	}
	resize := recommend.PatchChange{Limits: map[vocab.Resource]int64{"nvidia.com/mig-1g.10gb": 1}, Remove: []vocab.Resource{"nvidia.com/gpu"}}
	var fs []findings.Finding
	for _, kind := range []string{"Deployment", "StatefulSet", "DaemonSet", "CronJob", "Job", "Pod"} {
		fs = append(fs, finding(&recommend.Recommendation{Action: recommend.ActionMIGProfile, Workload: ref(kind),
			Summary: "resize " + v, Patch: recommend.BuildPatch(ref(kind), resize), Notes: []string{"note " + v}}))
	}
	for _, kind := range []string{"Deployment", "StatefulSet", "Job", "CronJob", "Pod", "DaemonSet"} {
		fs = append(fs, finding(&recommend.Recommendation{Action: recommend.ActionRelease, Workload: ref(kind), Summary: "release " + v}))
	}
	ts := ref("Deployment")
	ts.Name = "shared-" + v
	fs = append(fs, finding(&recommend.Recommendation{Action: recommend.ActionTimeSlicing, Workload: ts,
		Patch:              recommend.BuildPatch(ts, recommend.PatchChange{Limits: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}, Remove: []vocab.Resource{"nvidia.com/gpu"}}),
		DevicePluginConfig: "version: v1\n", Sharing: &recommend.Sharing{Strategy: "time-slicing", Replicas: 4}}))
	dra := ref("Deployment")
	dra.Name = "dra-" + v
	claimPatch := recommend.BuildPatch(dra, recommend.PatchChange{})
	claimPatch.Change = recommend.PatchChange{}
	claimPatch.Claims = []recommend.PodClaim{{Name: "gpu-" + v, Template: "tmpl-" + v}}
	fs = append(fs, finding(&recommend.Recommendation{Action: recommend.ActionMIGProfile, Workload: dra, Allocation: "dra",
		Claim: "ResourceClaimTemplate ns-" + v + "/old-" + v, Notes: []string{"dra " + v},
		ClaimTemplate: &recommend.Manifest{Kind: "ResourceClaimTemplate", Namespace: "ns-" + v, Name: "tmpl-" + v,
			Spec: map[string]any{"spec": map[string]any{"devices": map[string]any{"requests": []any{
				map[string]any{"name": "gpu", "exactly": map[string]any{"deviceClassName": "mig.nvidia.com",
					"selectors": []any{map[string]any{"cel": map[string]any{"expression": "device.attributes['x'].y == '" + v + "'"}}}}}}}}}},
		Patch: claimPatch}))

	p := &plan.Plan{Pools: []plan.PoolPlan{{Cluster: v, Model: "A100-" + v, GPUs: []plan.GPU{
		{Index: 0, Mode: plan.ModeTimeSlicing, Replicas: 4, Lanes: []string{"lane-" + v}},
		{Index: 1, Mode: plan.ModeMIG, Slices: []string{"1g.10gb", "3g.40gb"}, Lanes: []string{"lane-" + v}, DRALanes: []string{"dra-" + v}},
		{Index: 2, Mode: plan.ModeWhole, Lanes: []string{"lane-" + v}},
	}, Assignments: []plan.Assignment{
		{Lane: "lane-" + v, Workload: ref("Deployment"), Mode: plan.ModeTimeSlicing, Resource: "nvidia.com/gpu.shared", From: "gpu", Moved: true},
		{Lane: "lane2-" + v, Workload: ref("Pod"), Mode: plan.ModeMIG, Resource: "nvidia.com/mig-1g.10gb", From: "mig 3g.40gb", Slice: "1g.10gb", Moved: true},
		{Lane: "dra-" + v, Workload: ref("StatefulSet"), Mode: plan.ModeMIG, Resource: "nvidia.com/mig-1g.10gb", From: "gpu", AllocationPath: "dra", Claims: []string{"claim-" + v}, Moved: true},
	}}}}
	borrow := 2
	advice := []quota.Advice{
		{Cluster: v, Kind: quota.KindResourceQuota, Name: "q-" + v, Namespace: "ns-" + v, Resource: "nvidia.com/gpu", Advised: 3,
			Patch: `{"spec":{"hard":{"requests.nvidia.com/gpu":"3"}}}`, PatchType: "merge", Notes: []string{"quota " + v}},
		{Cluster: v, Kind: quota.KindClusterQueue, Name: "cq-" + v, Flavor: "f-" + v, Resource: "nvidia.com/gpu", Advised: 4, AdvisedBorrowing: &borrow,
			Patch: `[{"op":"replace","path":"/spec/resourceGroups/0/flavors/0/resources/0/nominalQuota","value":"4"}]`, PatchType: "json"},
	}
	return fs, p, advice
}

// outputs are every YAML output of the advice: this package's stream and
// kustomize directory, and the lean packages' own YAML writers.
func outputs(t testing.TB, v string) map[string][]byte {
	fs, p, advice := adviceOf(v)
	out := map[string][]byte{}
	for name, docs := range map[string][]Doc{"recommend": FromFindings(fs), "plan": FromPlan(p), "quota": FromQuota(advice)} {
		var buf bytes.Buffer
		if err := Write(&buf, docs, "nothing"); err != nil {
			t.Fatal(err)
		}
		out[name] = buf.Bytes()
		dir := t.TempDir()
		files, err := WriteKustomize(dir, docs, "nothing")
		if err != nil {
			t.Fatal(err)
		}
		var all bytes.Buffer
		for _, f := range files {
			if !strings.HasPrefix(f, dir+"/") {
				t.Fatalf("%s: %s is outside %s", name, f, dir)
			}
			b, err := readFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all.WriteString("---\n")
			all.Write(b)
		}
		out[name+"-kustomize"] = all.Bytes()
	}
	return out
}

// shape is what a YAML stream is, whatever its names: each document's
// apiVersion and kind (or, for one that has none, its top-level keys).
func shape(t testing.TB, b []byte) []string {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufioReader(b))
	var out []string
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		var x any
		if err := yaml.Unmarshal(doc, &x); err != nil {
			t.Fatalf("a document does not parse: %v\n%s", err, doc)
		}
		if x == nil {
			continue // comments alone
		}
		m, ok := x.(map[string]any)
		if !ok {
			out = append(out, fmt.Sprintf("%T", x))
			continue
		}
		if k, ok := m["kind"].(string); ok {
			av, _ := m["apiVersion"].(string)
			out = append(out, av+" "+k)
			continue
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out = append(out, strings.Join(keys, ","))
	}
}
