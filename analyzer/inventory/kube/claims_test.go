package kube

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/vocab"
)

// The requests of testdata/dra.yaml, as the scenario writes them.
var (
	wholeH100 = dra.Request{Name: "gpu", DeviceClass: dra.ClassGPU, AllocationMode: dra.ModeExactCount, Count: 1,
		Selectors: []string{"device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'"}}
	// Index 1: the template's first request is a NIC, which is no GPU.
	mig3g = dra.Request{Name: "mig", Index: 1, DeviceClass: dra.ClassMIG, AllocationMode: dra.ModeExactCount, Count: 1,
		Selectors: []string{"device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}, MIGProfile: "3g.40gb"}
	anyGPU = dra.Request{Name: "gpu", DeviceClass: dra.ClassGPU, AllocationMode: dra.ModeExactCount, Count: 1}
)

func TestClaimsOf(t *testing.T) {
	inv := Read(t.Context(), fakeCluster(t, "testdata/dra.yaml"), testOptions(t))
	if len(inv.Skipped) != 0 {
		t.Fatalf("Skipped = %q", inv.Skipped)
	}
	tests := []struct {
		name  string
		pods  []string
		want  []dra.Claim
		alloc vocab.AllocationPath // AllocationOf the first pod
	}{
		{"a Deployment's pods each get a whole GPU from one template",
			[]string{"detector-7c9d8b6f45-k2x9q", "detector-7c9d8b6f45-p4w8z"},
			[]dra.Claim{{PodClaim: "gpu", Template: "single-gpu", Requests: []dra.Request{wholeH100},
				Metadata:   map[string]any{"labels": map[string]any{"app": "detector"}},
				Containers: map[string][]string{"main": nil},
				Pods:       []string{"detector-7c9d8b6f45-k2x9q", "detector-7c9d8b6f45-p4w8z"}}},
			vocab.AllocationPathDRA},
		{"a Job on a pinned MIG profile, beside a NIC",
			[]string{"embed-x7k2p"},
			[]dra.Claim{{PodClaim: "slice", Template: "mig-3g", Requests: []dra.Request{mig3g},
				Containers: map[string][]string{"main": {"mig"}}, Pods: []string{"embed-x7k2p"}}},
			vocab.AllocationPathDRA},
		// notebook-old named the claim too, but has finished; the
		// scheduler's reservation lists the two running notebooks.
		{"two notebooks share one inventory.ResourceClaim",
			[]string{"notebook-a"},
			[]dra.Claim{{PodClaim: "gpu", ResourceClaim: "shared-gpu", Requests: []dra.Request{anyGPU},
				Containers: map[string][]string{"main": nil}, Pods: []string{"notebook-a"}, SharedBy: []string{"notebook-a", "notebook-b"}}},
			vocab.AllocationPathDRA},
		{"a claim of a NIC only is no GPU claim", []string{"packet-capture"}, nil, ""},
		{"a device-plugin pod in the same namespace", []string{"legacy-0"}, nil, vocab.AllocationPathDevicePlugin},
		{"a pod the inventory does not know", []string{"gone-abcde"}, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := inv.ClaimsOf("vision", tt.pods)
			for i := range got {
				got[i].Spec = nil // checked below
			}
			for i := range tt.want {
				tt.want[i].Namespace = "vision"
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ClaimsOf (-want +got):\n%s", diff)
			}
			if a := inv.AllocationOf("vision", tt.pods[0]); a != tt.alloc {
				t.Errorf("AllocationOf = %q, want %q", a, tt.alloc)
			}
		})
	}

	shared := inv.GPUClaimOf("vision", []string{"notebook-b"})
	if shared == nil || !shared.Shared() || shared.Source() != "ResourceClaim vision/shared-gpu" {
		t.Errorf("notebook-b's claim = %+v, want the shared inventory.ResourceClaim vision/shared-gpu", shared)
	}
	if c := inv.GPUClaimOf("vision", []string{"embed-x7k2p"}); c == nil || c.Shared() || c.Source() != "ResourceClaimTemplate vision/mig-3g" {
		t.Errorf("embed's claim = %+v, want the unshared template vision/mig-3g", c)
	}
	// A claim with a slice for each container: each container's own.
	for ctr, want := range map[string]string{"draft": "1g.10gb", "verify": "3g.40gb", "": "1g.10gb 3g.40gb", "sidecar": "1g.10gb 3g.40gb"} {
		c := inv.GPUClaimFor("vision", []string{"ensemble"}, ctr)
		var got []string
		for _, r := range c.Requests {
			got = append(got, r.MIGProfile)
		}
		if strings.Join(got, " ") != want || c.Template != "mig-pair" {
			t.Errorf("GPUClaimFor(ensemble, %q) = %s %q, want mig-pair %s", ctr, c.Template, got, want)
		}
	}
	// The spec is kept whole, NIC and all, for a changed copy.
	c := inv.GPUClaimOf("vision", []string{"embed-x7k2p"})
	reqs, _ := c.Spec["devices"].(map[string]any)["requests"].([]any)
	if len(reqs) != 2 || reqs[0].(map[string]any)["name"] != "nic" {
		t.Errorf("template spec requests = %v, want the NIC and the MIG request", reqs)
	}
	// A pod's generated claim is recorded, and the device-plugin pod has
	// its limits and no claims.
	if diff := cmp.Diff([]inventory.PodClaim{{Name: "gpu", Template: "single-gpu", Claim: "detector-7c9d8b6f45-k2x9q-gpu-h7m2v", Containers: map[string][]string{"main": nil}}},
		inv.Pods[inventory.PodKey{Namespace: "vision", Name: "detector-7c9d8b6f45-k2x9q"}].Claims); diff != "" {
		t.Errorf("detector pod claims (-want +got):\n%s", diff)
	}
	if p := inv.Pods[inventory.PodKey{Namespace: "vision", Name: "legacy-0"}]; p.Claims != nil || p.GPURequests["nvidia.com/gpu"] != 1 {
		t.Errorf("legacy pod: claims %+v, GPU requests %v", p.Claims, p.GPURequests)
	}
}

// TestClaimsDegrade: without the right to list claims or templates the
// rest of the inventory is read and the loss is named; an API server
// without resource.k8s.io/v1 (before 1.34) has no claims and that is no
// loss.
func TestClaimsDegrade(t *testing.T) {
	notFound := func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewNotFound(a.GetResource().GroupResource(), "")
	}
	tests := []struct {
		resource string
		react    k8stesting.ReactionFunc
		skipped  string
		// claims is what ClaimsOf finds for detector's and notebook-a's pods.
		claims []string
	}{
		{"resourceclaimtemplates", forbidden("resourceclaimtemplates"),
			"resourceclaimtemplates: forbidden (DRA workloads' GPU requests unknown", []string{"ResourceClaim vision/shared-gpu"}},
		{"resourceclaims", forbidden("resourceclaims"),
			"resourceclaims: forbidden (DRA claims unknown", []string{"ResourceClaimTemplate vision/single-gpu"}},
		{"resourceclaims", notFound, "", []string{"ResourceClaimTemplate vision/single-gpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.resource+" "+tt.skipped, func(t *testing.T) {
			c := fakeCluster(t, "testdata/dra.yaml")
			c.PrependReactor("list", tt.resource, tt.react)
			inv := Read(t.Context(), c, testOptions(t))
			if tt.skipped == "" && len(inv.Skipped) != 0 || tt.skipped != "" && (len(inv.Skipped) != 1 || !strings.HasPrefix(inv.Skipped[0], tt.skipped)) {
				t.Fatalf("Skipped = %q, want %q", inv.Skipped, tt.skipped)
			}
			var got []string
			for _, cl := range inv.ClaimsOf("vision", []string{"detector-7c9d8b6f45-k2x9q", "notebook-a"}) {
				got = append(got, cl.Source())
			}
			if !slices.Equal(got, tt.claims) {
				t.Errorf("claims %q, want %q", got, tt.claims)
			}
			if len(inv.Pods) != 17 {
				t.Errorf("%d pods, want the 8 of cluster.yaml and the 9 of dra.yaml", len(inv.Pods))
			}
		})
	}
}
