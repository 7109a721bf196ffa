package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/gpulens/gpulens/analyzer/findings"
)

func TestAllocationColumns(t *testing.T) {
	for _, tt := range []struct {
		f    Finding
		want string
	}{
		{Finding{Subject: "gpu-1/GPU-a"}, "-"},
		{Finding{AllocationPath: "device-plugin"}, "device-plugin"},
		{Finding{AllocationPath: "dra", Claims: []string{"ml/infer-7d9f8c6b5-x2k9q-gpu-m4t7w"}}, "dra (ml/infer-7d9f8c6b5-x2k9q-gpu-m4t7w)"},
		{Finding{AllocationPath: "dra", Claims: []string{"ml/a", "ml/b"}}, "dra (2 claims)"},
	} {
		if got := allocationOf(tt.f); got != tt.want {
			t.Errorf("allocationOf(%+v) = %q, want %q", tt.f, got, tt.want)
		}
	}
	for _, tt := range []struct {
		paths map[string]int
		want  string
	}{
		{nil, "no workload held a GPU"},
		{map[string]int{"device-plugin": 8}, "8 through the device plugin"},
		{map[string]int{"device-plugin": 1, "dra": 4}, "1 through the device plugin, 4 through DRA ResourceClaims (their GPUs are reconfigured through the claims, not device plugin or MIG manager node labels)"},
	} {
		if got := allocationPaths(Coverage{AllocationPaths: tt.paths}); got != tt.want {
			t.Errorf("allocationPaths(%v) = %q, want %q", tt.paths, got, tt.want)
		}
	}
}

// TestRecommendationThroughClaim: a change made in a DRA claim says so
// where the table shows the change; one on the device plugin's path does
// not.
func TestRecommendationThroughClaim(t *testing.T) {
	r := &Report{Currency: "USD", Recommendations: []Recommendation{
		{Workload: "Deployment/ml/infer", From: "gpu.nvidia.com", To: "mig.nvidia.com 1g.10gb", Allocation: "dra", Claim: "ResourceClaimTemplate ml/infer-gpu"},
		{Workload: "Pod/research/alice", From: "nvidia.com/gpu", To: "nvidia.com/mig-1g.10gb", Allocation: "device-plugin"},
	}}
	s := r.recommendationSection()
	for i, want := range []string{
		"gpu.nvidia.com → mig.nvidia.com 1g.10gb (ResourceClaimTemplate ml/infer-gpu)",
		"nvidia.com/gpu → nvidia.com/mig-1g.10gb",
	} {
		if got := s.Rows[i][3]; got != want {
			t.Errorf("row %d change %q, want %q", i, got, want)
		}
	}
}

// TestFindingsJSONSaysThePath: recommend's JSON (and serve's
// /api/v1/findings) carries each finding's allocation path and claims, so a
// script can tell the findings to act on through a claim from the others.
func TestFindingsJSONSaysThePath(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFindingsJSON(&b, []findings.Finding{
		{Kind: "underused", AllocationPath: "dra", Claims: []string{"ml/infer-gpu-x2k9q"}},
		{Kind: "underused", AllocationPath: "device-plugin"},
		{Kind: "unallocated-capacity"},
	}); err != nil {
		t.Fatal(err)
	}
	var got []struct {
		AllocationPath *string  `json:"allocation_path"`
		Claims         []string `json:"claims"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d findings, want 3:\n%s", len(got), b.String())
	}
	if p := got[0].AllocationPath; p == nil || *p != "dra" || !slices.Equal(got[0].Claims, []string{"ml/infer-gpu-x2k9q"}) {
		t.Errorf("DRA finding: path %v, claims %v", p, got[0].Claims)
	}
	if p := got[1].AllocationPath; p == nil || *p != "device-plugin" || got[1].Claims != nil {
		t.Errorf("device-plugin finding: path %v, claims %v", p, got[1].Claims)
	}
	// A GPU-level finding has no workload, so no path: absent, not "".
	if got[2].AllocationPath != nil {
		t.Errorf("GPU finding has allocation_path %q", *got[2].AllocationPath)
	}
}
