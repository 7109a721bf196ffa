package recommend

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/vocab"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// claimSpec decodes a ResourceClaimSpec as the inventory keeps it.
func claimSpec(t *testing.T, js string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const productH100 = "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"

// wholeGPUClaim is a Deployment's template for one whole H100, as in the
// NVIDIA DRA driver's demo/specs/quickstart/v1/gpu-test2.yaml with a
// product selector.
func wholeGPUClaim(t *testing.T) *dra.Claim {
	return &dra.Claim{Namespace: "vision", PodClaim: "gpu", Template: "single-gpu",
		Requests: []dra.Request{{Name: "gpu", DeviceClass: dra.ClassGPU, AllocationMode: dra.ModeExactCount, Count: 1, Selectors: []string{productH100}}},
		Spec: claimSpec(t, `{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"ExactCount","count":1,
			"selectors":[{"cel":{"expression":"`+productH100+`"}}]}}]}}`),
		Metadata: map[string]any{"labels": map[string]any{"app": "detector"}},
		Pods:     []string{"detector-7c9d8b6f45-k2x9q"}}
}

func TestRightSizeThroughDRA(t *testing.T) {
	detector := workload.Ref{Kind: "Deployment", Namespace: "vision", Name: "detector", Container: "main"}
	// An idle whole H100: 2 GiB × 1.2 and 1% load fit the smallest slice,
	// as for the device plugin (TestRightSize), but the change is a new
	// claim template, not a limit.
	u := Usage{Workload: detector, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: 2 * gibF, Claim: wholeGPUClaim(t)}
	r := RightSize(u, criteria.DefaultPolicy())
	if r == nil || r.Action != ActionMIGProfile || r.RecommendedShare != 1.0/7 {
		t.Fatalf("got %+v, want a 1g.10gb slice at 1/7", r)
	}
	if r.Allocation != vocab.AllocationPathDRA || r.Claim != "ResourceClaimTemplate vision/single-gpu" ||
		r.From != "gpu.nvidia.com" || r.To != "mig.nvidia.com 1g.10gb" || r.DevicePluginConfig != "" {
		t.Errorf("allocation %q claim %q, %s → %s, config %q", r.Allocation, r.Claim, r.From, r.To, r.DevicePluginConfig)
	}
	wantTemplate := `apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
    name: single-gpu-1g.10gb
    namespace: vision
spec:
    metadata:
        labels:
            app: detector
    spec:
        devices:
            requests:
                - exactly:
                    allocationMode: ExactCount
                    count: 1
                    deviceClassName: mig.nvidia.com
                    selectors:
                        - cel:
                            expression: device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'
                        - cel:
                            expression: device.attributes['gpu.nvidia.com'].profile == '1g.10gb'
                  name: gpu
`
	if r.ClaimTemplate == nil || r.ClaimTemplate.YAML != wantTemplate {
		t.Errorf("template:\n%v\nwant\n%s", r.ClaimTemplate, wantTemplate)
	}
	wantPatch := `{"spec":{"template":{"spec":{"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"single-gpu-1g.10gb"}]}}}}`
	if r.Patch == nil || r.Patch.JSON != wantPatch || r.Patch.Target != "Deployment/vision/detector" || strings.Contains(r.Patch.YAML, "limits") {
		t.Errorf("patch %+v, want %s", r.Patch, wantPatch)
	}
	if len(r.Notes) < 1 || !strings.Contains(r.Notes[0], "immutable") || strings.Contains(strings.Join(r.Notes, " "), "mixed MIG strategy") {
		t.Errorf("notes %q: want the immutability, not the device plugin's MIG strategy", r.Notes)
	}
}

func TestChangeClaim(t *testing.T) {
	job := workload.Ref{Kind: "Job", Namespace: "vision", Name: "embed"}
	mig := func(template, profile string) *dra.Claim {
		sel := dra.ProfileSelector(profile)
		return &dra.Claim{Namespace: "vision", PodClaim: "slice", Template: template,
			Requests: []dra.Request{{Name: "mig", Index: 1, DeviceClass: dra.ClassMIG, AllocationMode: dra.ModeExactCount, Count: 1, Selectors: []string{sel}, MIGProfile: profile}},
			Spec: claimSpec(t, `{"devices":{"requests":[{"name":"nic","exactly":{"deviceClassName":"nic.example.com"}},
				{"name":"mig","exactly":{"deviceClassName":"mig.nvidia.com","allocationMode":"ExactCount","count":1,"selectors":[{"cel":{"expression":"`+sel+`"}}]}}],
				"constraints":[{"matchAttribute":"gpu.nvidia.com/parentUUID"}]}}`)}
	}
	tests := []struct {
		name     string
		w        workload.Ref
		c        *dra.Claim
		to       ClaimChange
		template string // the new template's name; "" for none
		request  string // the changed request, as JSON
		patch    string
		notes    []string // substrings, in order
	}{
		{"a MIG slice to a smaller one keeps the NIC and names the new size", job, mig("embed-3g.40gb", "3g.40gb"),
			ClaimChange{DeviceClass: dra.ClassMIG, MIGProfile: "1g.10gb"}, "embed-1g.10gb",
			`{"allocationMode":"ExactCount","count":1,"deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]}`,
			`{"spec":{"template":{"spec":{"resourceClaims":[{"name":"slice","resourceClaimTemplateName":"embed-1g.10gb"}]}}}}`,
			[]string{"ResourceClaimTemplate vision/embed-3g.40gb cannot be edited", "drops the selectors", "recreate it"}},
		{"a MIG slice to a whole GPU: the parentUUID constraint is flagged", job, mig("mig-3g", "3g.40gb"),
			ClaimChange{DeviceClass: dra.ClassGPU}, "mig-3g-gpu",
			`{"allocationMode":"ExactCount","count":1,"deviceClassName":"gpu.nvidia.com"}`,
			`{"spec":{"template":{"spec":{"resourceClaims":[{"name":"slice","resourceClaimTemplateName":"mig-3g-gpu"}]}}}}`,
			[]string{"cannot be edited", "drops the selectors", "constraints still hold for gpu.nvidia.com", "recreate it"}},
		{"two whole GPUs to one, in a CronJob", workload.Ref{Kind: "CronJob", Namespace: "vision", Name: "nightly"},
			&dra.Claim{Namespace: "vision", PodClaim: "gpus", Template: "train-gpu-x2",
				Requests: []dra.Request{{Name: "gpus", DeviceClass: dra.ClassGPU, AllocationMode: dra.ModeExactCount, Count: 2}},
				Spec:     claimSpec(t, `{"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"ExactCount","count":2}}]}}`)},
			ClaimChange{DeviceClass: dra.ClassGPU, Count: 1}, "train-gpu",
			`{"allocationMode":"ExactCount","count":1,"deviceClassName":"gpu.nvidia.com"}`,
			`{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"resourceClaims":[{"name":"gpus","resourceClaimTemplateName":"train-gpu"}]}}}}}}`,
			[]string{"cannot be edited"}},
		{"a template whose spec was not kept gets words, not a wrong object", job,
			&dra.Claim{Namespace: "vision", PodClaim: "slice", Template: "embed-3g.40gb",
				Requests: []dra.Request{{Name: "mig", DeviceClass: dra.ClassMIG, AllocationMode: dra.ModeExactCount, Count: 1, MIGProfile: "3g.40gb"}}},
			ClaimChange{DeviceClass: dra.ClassMIG, MIGProfile: "1g.10gb"}, "", "", "",
			[]string{`change request "mig" of ResourceClaimTemplate vision/embed-3g.40gb to ask for mig.nvidia.com 1g.10gb, in a new template`}},
		{"a shared ResourceClaim is named, not patched", workload.Ref{Kind: "Pod", Namespace: "vision", Name: "notebook-a"},
			&dra.Claim{Namespace: "vision", PodClaim: "gpu", ResourceClaim: "shared-gpu",
				Requests: []dra.Request{{Name: "gpu", DeviceClass: dra.ClassGPU, AllocationMode: dra.ModeExactCount, Count: 1}},
				Pods:     []string{"notebook-a"}, SharedBy: []string{"notebook-a", "notebook-b"}},
			ClaimChange{DeviceClass: dra.ClassMIG, MIGProfile: "2g.20gb"}, "", "", "",
			[]string{"ResourceClaim vision/shared-gpu is a ResourceClaim, not generated from a template, so it cannot be patched in place", "asks for mig.nvidia.com 2g.20gb",
				"shared by pods notebook-a, notebook-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, patch, notes := ChangeClaim(tt.w, tt.c, tt.to)
			if tt.template == "" {
				if tmpl != nil || patch != nil {
					t.Errorf("template %v, patch %v; want neither", tmpl, patch)
				}
			} else {
				if tmpl == nil || tmpl.Name != tt.template || tmpl.Namespace != "vision" || patch == nil || patch.JSON != tt.patch {
					t.Fatalf("template %+v, patch %+v; want %s and %s", tmpl, patch, tt.template, tt.patch)
				}
				var obj struct {
					Spec struct {
						Spec struct {
							Devices struct {
								Requests []map[string]json.RawMessage `json:"requests"`
							} `json:"devices"`
						} `json:"spec"`
					} `json:"spec"`
				}
				if err := json.Unmarshal([]byte(tmpl.JSON), &obj); err != nil {
					t.Fatal(err)
				}
				reqs := obj.Spec.Spec.Devices.Requests
				idx := tt.c.Requests[0].Index
				if len(reqs) != idx+1 || string(reqs[idx]["exactly"]) != tt.request {
					t.Errorf("requests %s\nwant request %d exactly %s", tmpl.JSON, idx, tt.request)
				}
				// The original is untouched: the inventory's copy is shared.
				if orig := mustJSON(tt.c.Spec); strings.Contains(orig, tt.template) || !strings.Contains(orig, tt.c.Requests[0].DeviceClass) {
					t.Errorf("the claim's own spec changed: %s", orig)
				}
			}
			joined, at := strings.Join(notes, "\n"), 0
			for _, n := range tt.notes {
				i := strings.Index(joined[at:], n)
				if i < 0 {
					t.Errorf("notes %q lack %q (in order)", notes, n)
					break
				}
				at += i + len(n)
			}
		})
	}
}

func TestDRARules(t *testing.T) {
	p := criteria.DefaultPolicy()
	w := workload.Ref{Kind: "Deployment", Namespace: "vision", Name: "x"}
	claim := func(class, profile string) *dra.Claim {
		r := dra.Request{Name: "gpu", DeviceClass: class, AllocationMode: dra.ModeExactCount, Count: 1, MIGProfile: profile}
		spec := `{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"` + class + `"}}]}}`
		if profile != "" {
			r.Selectors = []string{dra.ProfileSelector(profile)}
		}
		return &dra.Claim{Namespace: "vision", PodClaim: "gpu", Template: "t", Requests: []dra.Request{r}, Spec: claimSpec(t, spec)}
	}
	tests := []struct {
		name     string
		r        *Recommendation
		from, to string
		template string
	}{
		{"upsize a MIG slice", Upsize(Usage{Workload: w, Model: h100, Sharing: "mig", MIGProfile: "2g.20gb", Share: 2.0 / 7, P95Utilization: 0.99,
			P99MemoryBytes: 18 * gibF, Claim: claim(dra.ClassMIG, "2g.20gb")}, p), "mig.nvidia.com 2g.20gb", "mig.nvidia.com 3g.40gb", "t-3g.40gb"},
		{"a dedicated GPU for a slice no profile holds", Dedicated(Usage{Workload: w, Model: h100, Sharing: "mig", MIGProfile: "1g.10gb", Share: 1.0 / 7,
			Claim: claim(dra.ClassMIG, "1g.10gb")}, p, "training-like load"), "mig.nvidia.com 1g.10gb", "gpu.nvidia.com", "t-gpu"},
		// 4 GiB × 1.2 and 15% of an L4 fit a quarter: through DRA that is
		// a claim shared by pods, which no template change makes.
		{"time-slicing is a shared claim, not a template", RightSize(Usage{Workload: w, Model: l4, Sharing: "none", Share: 1, P95Utilization: 0.15,
			P99MemoryBytes: 4 * gibF, Claim: claim(dra.ClassGPU, "")}, p), "gpu.nvidia.com", "gpu.nvidia.com shared 4 ways", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			if r == nil {
				t.Fatal("no recommendation")
			}
			var got string
			if r.ClaimTemplate != nil {
				got = r.ClaimTemplate.Name
			}
			if diff := cmp.Diff([]string{string(vocab.AllocationPathDRA), tt.from, tt.to, tt.template, ""},
				[]string{string(r.Allocation), r.From, r.To, got, r.DevicePluginConfig}); diff != "" {
				t.Errorf("allocation, from, to, template, device plugin config (-want +got):\n%s", diff)
			}
			if (r.Patch == nil) != (tt.template == "") || r.Patch != nil && strings.Contains(r.Patch.YAML, "limits") {
				t.Errorf("patch %+v", r.Patch)
			}
		})
	}
	// The device plugin's path says so too.
	if r := RightSize(Usage{Workload: w, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: gibF}, p); r.Allocation != vocab.AllocationPathDevicePlugin || r.ClaimTemplate != nil {
		t.Errorf("device plugin: allocation %q, template %v", r.Allocation, r.ClaimTemplate)
	}
}

// TestThroughDRAWithoutSpec: the metrics say the GPU came through a claim
// but the cluster's claims could not be read. The sizing is the same as
// the device plugin's (1 GiB at 1%: the smallest H100 slice, 1g.10gb), said
// as the driver's device classes, with the claim named and no patch.
func TestThroughDRAWithoutSpec(t *testing.T) {
	w := workload.Ref{Kind: "Deployment", Namespace: "ml", Name: "infer"}
	u := Usage{Workload: w, Model: "H100-80GB", Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: 1 << 30}
	plugin := RightSize(u, criteria.DefaultPolicy())
	u.ThroughDRA, u.ClaimNames = true, []string{"ml/infer-x2k9q-gpu"}
	r := RightSize(u, criteria.DefaultPolicy())
	if plugin == nil || r == nil || plugin.To != "nvidia.com/mig-1g.10gb" {
		t.Fatalf("device plugin %+v, DRA %+v", plugin, r)
	}
	if r.Allocation != vocab.AllocationPathDRA || r.From != "gpu.nvidia.com" || r.To != "mig.nvidia.com 1g.10gb" ||
		r.Claim != "ResourceClaim ml/infer-x2k9q-gpu" || r.Patch != nil || r.ClaimTemplate != nil || r.RecommendedShare != plugin.RecommendedShare {
		t.Errorf("DRA without spec: %+v", r)
	}
	notes := strings.Join(r.Notes, "\n")
	if strings.Contains(notes, "mig.config") || !strings.Contains(notes, "the DRA driver publishes") || !strings.Contains(notes, "request mig.nvidia.com 1g.10gb in the claim") {
		t.Errorf("notes %q", r.Notes)
	}
}
