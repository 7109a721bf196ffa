package report

import (
	"bytes"
	"encoding/json"
	"github.com/gpulens/gpulens/analyzer/criteria"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// draFindings are an idle whole H100 of a Deployment that gets it from a
// claim template, the same through a ResourceClaim two notebooks share,
// and an idle H100 held through the device plugin, each right-sized to a
// 1g.10gb slice by the recommend package itself.
func draFindings(t *testing.T) []findings.Finding {
	t.Helper()
	spec := func() map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(`{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}`), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	req := []dra.Request{{Name: "gpu", DeviceClass: dra.ClassGPU, AllocationMode: dra.ModeExactCount, Count: 1}}
	idle := func(w workload.Ref, c *dra.Claim) findings.Finding {
		u := recommend.Usage{Workload: w, Model: "NVIDIA H100 80GB HBM3", Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: 1 << 30, Claim: c}
		r := recommend.RightSize(u, criteria.DefaultPolicy())
		if r == nil {
			t.Fatalf("%s: no recommendation", w)
		}
		return findings.Finding{Kind: "idle-allocation", Severity: findings.Warning, Namespace: w.Namespace, Workload: w.Name, WorkloadKind: w.Kind,
			Summary: w.Name + " held a whole H100 at 1% use", CostKnown: true, MonthlySavingsUSD: 100, Recommendation: r}
	}
	return []findings.Finding{
		idle(workload.Ref{Kind: "Deployment", Namespace: "vision", Name: "detector", Container: "main"},
			&dra.Claim{Namespace: "vision", PodClaim: "gpu", Template: "single-gpu", Requests: req, Spec: spec()}),
		idle(workload.Ref{Kind: "Pod", Namespace: "vision", Name: "notebook-a", Container: "main"},
			&dra.Claim{Namespace: "vision", PodClaim: "gpu", ResourceClaim: "shared-gpu", Requests: req, Spec: spec(), SharedBy: []string{"notebook-a", "notebook-b"}}),
		idle(workload.Ref{Kind: "Deployment", Namespace: "vision", Name: "legacy", Container: "main"}, nil),
	}
}

func TestRecommendationsSayTheAllocationPath(t *testing.T) {
	fs := draFindings(t)
	render := func(format string) string {
		var b bytes.Buffer
		if err := WriteRecommendations(&b, fs, format); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	// The columns' padding collapsed to one space; -o wide, whose lines
	// are whole (the default table wraps them at 120 columns).
	table := strings.Join(strings.FieldsFunc(render("wide"), func(r rune) bool { return r == ' ' }), " ")
	for _, want := range []string{
		"Deployment/vision/detector gpu.nvidia.com → mig.nvidia.com 1g.10gb (dra)",
		"allocation: dra, through ResourceClaimTemplate vision/single-gpu (immutable): create ResourceClaimTemplate vision/single-gpu-1g.10gb and point the pod template at it",
		"Pod/vision/notebook-a gpu.nvidia.com → mig.nvidia.com 1g.10gb (dra)",
		"allocation: dra, through ResourceClaim vision/shared-gpu: nothing to patch\n - ResourceClaim vision/shared-gpu is a ResourceClaim, not generated from a template, so it cannot be patched in place",
		"shared by pods notebook-a, notebook-b",
		"Deployment/vision/legacy nvidia.com/gpu → nvidia.com/mig-1g.10gb $100",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}

	var js []struct {
		Workload       string
		Recommendation struct {
			Allocation    string `json:"allocation"`
			Claim         string `json:"claim"`
			ClaimTemplate string `json:"claim_template"`
			Patch         string `json:"patch"`
		} `json:"recommendation"`
	}
	if err := json.Unmarshal([]byte(render("json")), &js); err != nil || len(js) != 3 {
		t.Fatalf("json: %v (%d findings)", err, len(js))
	}
	want := [][4]string{
		{"dra", "ResourceClaimTemplate vision/single-gpu", "single-gpu-1g.10gb", "resourceClaimTemplateName"},
		{"dra", "ResourceClaim vision/shared-gpu", "", ""},
		{"device-plugin", "", "", "nvidia.com/mig-1g.10gb"},
	}
	for i, w := range want {
		r := js[i].Recommendation
		if r.Allocation != w[0] || r.Claim != w[1] || !strings.Contains(r.ClaimTemplate, w[2]) || (w[2] == "") != (r.ClaimTemplate == "") ||
			!strings.Contains(r.Patch, w[3]) || (w[3] == "") != (r.Patch == "") {
			t.Errorf("%s: %+v, want allocation %q claim %q template %q patch with %q", js[i].Workload, r, w[0], w[1], w[2], w[3])
		}
	}

	// The patches: the new template, then the patch pointing detector at
	// it; a document of comments only for the shared claim; the device
	// plugin's limits patch.
	out := render("yaml")
	dec := yaml.NewDecoder(strings.NewReader(out))
	var kinds []string
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("%v\n%s", err, out)
		}
		switch {
		case doc == nil:
			kinds = append(kinds, "comments")
		case doc["kind"] != nil:
			kinds = append(kinds, doc["kind"].(string))
		default:
			kinds = append(kinds, "patch")
		}
	}
	if got := strings.Join(kinds, ","); got != "ResourceClaimTemplate,patch,comments,patch" {
		t.Errorf("documents %s, want ResourceClaimTemplate,patch,comments,patch:\n%s", got, out)
	}
	for _, want := range []string{
		"# kubectl -n vision create -f <this document>\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate",
		"# then point Deployment/vision/detector at it:\n# kubectl -n vision patch deployment detector --type strategic",
		"# - ResourceClaim vision/shared-gpu is a ResourceClaim, not generated from a template, so it cannot be patched in place",
		"# allocation: device-plugin (the container's resources.limits)\n# kubectl -n vision patch deployment legacy",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("patches lack %q:\n%s", want, out)
		}
	}
}
