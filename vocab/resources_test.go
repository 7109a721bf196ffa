package vocab

import (
	"strings"
	"testing"
)

// TestResourceNames: the names the NVIDIA device plugin advertises
// (NVIDIA/k8s-device-plugin README.md: nvidia.com/gpu, renameByDefault's
// nvidia.com/gpu.shared, the mixed strategy's nvidia.com/mig-<profile>)
// and HAMi's, each read the way gpulens reads it.
func TestResourceNames(t *testing.T) {
	for _, tt := range []struct {
		name                   Resource
		nvidia, gpu, mig, shrd bool
		profile                string
		unshared               Resource
	}{
		{"nvidia.com/gpu", true, true, false, false, "", "nvidia.com/gpu"},
		{"nvidia.com/gpu.shared", true, true, false, true, "", "nvidia.com/gpu"},
		{"nvidia.com/mig-1g.10gb", true, true, true, false, "1g.10gb", "nvidia.com/mig-1g.10gb"},
		{"nvidia.com/mig-1g.10gb.shared", true, true, true, true, "1g.10gb", "nvidia.com/mig-1g.10gb"},
		{"nvidia.com/mig-7g.141gb", true, true, true, false, "7g.141gb", "nvidia.com/mig-7g.141gb"},
		{"nvidia.com/mig-1c.3g.20gb", true, true, true, false, "1c.3g.20gb", "nvidia.com/mig-1c.3g.20gb"},
		{"nvidia.com/mig-1g.10gb+me", true, true, true, false, "1g.10gb+me", "nvidia.com/mig-1g.10gb+me"},
		// A MIG name by its prefix, whose profile is not NVIDIA's shape:
		// counted as a GPU (the inventory's rule), no profile.
		{"nvidia.com/mig-", true, true, true, false, "", "nvidia.com/mig-"},
		{"nvidia.com/mig-.shared", true, true, true, true, "", "nvidia.com/mig-"},
		{"nvidia.com/mig-Big", true, true, true, false, "", "nvidia.com/mig-Big"},
		{"nvidia.com/mig-1g 10gb", true, true, true, false, "", "nvidia.com/mig-1g 10gb"},
		{"nvidia.com/gpumem", true, false, false, false, "", "nvidia.com/gpumem"},
		{"nvidia.com/gpucores", true, false, false, false, "", "nvidia.com/gpucores"},
		{"nvidia.com/gpu.product", true, false, false, false, "", "nvidia.com/gpu.product"},
		{"nvidia.com/gpus", true, false, false, false, "", "nvidia.com/gpus"},
		{"amd.com/gpu", false, false, false, false, "", "amd.com/gpu"},
		{"example.com/gpu.shared", false, false, false, true, "", "example.com/gpu"},
		{"cpu", false, false, false, false, "", "cpu"},
		{"", false, false, false, false, "", ""},
	} {
		t.Run(string(tt.name), func(t *testing.T) {
			if got := tt.name.IsNVIDIA(); got != tt.nvidia {
				t.Errorf("IsNVIDIA() = %v, want %v", got, tt.nvidia)
			}
			if got := tt.name.IsGPU(); got != tt.gpu {
				t.Errorf("IsGPU() = %v, want %v", got, tt.gpu)
			}
			if got := tt.name.IsMIG(); got != tt.mig {
				t.Errorf("IsMIG() = %v, want %v", got, tt.mig)
			}
			if got := tt.name.IsShared(); got != tt.shrd {
				t.Errorf("IsShared() = %v, want %v", got, tt.shrd)
			}
			if got, ok := tt.name.MIGProfile(); got != tt.profile || ok != (tt.profile != "") {
				t.Errorf("MIGProfile() = %q, %v, want %q", got, ok, tt.profile)
			}
			if got := tt.name.Unshared(); got != tt.unshared {
				t.Errorf("Unshared() = %q, want %q", got, tt.unshared)
			}
		})
	}
}

// TestResourceBuilt: the names built from pieces are the ones the device
// plugin and HAMi advertise, written out.
func TestResourceBuilt(t *testing.T) {
	for _, tt := range []struct {
		got  Resource
		want string
	}{
		{ResourceGPU, "nvidia.com/gpu"},
		{ResourceGPUShared, "nvidia.com/gpu.shared"},
		{ResourceGPU.Shared(), "nvidia.com/gpu.shared"},
		{ResourceGPUShared.Shared(), "nvidia.com/gpu.shared"},
		{MIGResource("1g.10gb"), "nvidia.com/mig-1g.10gb"},
		{MIGResource("3g.40gb").Shared(), "nvidia.com/mig-3g.40gb.shared"},
		{Resource("example.com/gpu-ts").Shared(), "example.com/gpu-ts.shared"},
		{ResourceHAMiMemory, "nvidia.com/gpumem"},
		{ResourceHAMiMemoryPercentage, "nvidia.com/gpumem-percentage"},
		{ResourceHAMiCores, "nvidia.com/gpucores"},
	} {
		if string(tt.got) != tt.want || tt.got.String() != tt.want {
			t.Errorf("%q, want %q", tt.got, tt.want)
		}
	}
}

// FuzzResourceMIGProfile: a name comes from the kubelet or a node's
// status as it is. Whatever it is, a profile read from it is in NVIDIA's
// shape and builds the name back (less renameByDefault's suffix), and a
// name is a GPU whenever it has a profile.
func FuzzResourceMIGProfile(f *testing.F) {
	for _, s := range []string{"nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb",
		"nvidia.com/mig-1g.10gb.shared", "nvidia.com/mig-1g.10gb+me", "nvidia.com/mig-", "nvidia.com/mig-.shared",
		"nvidia.com/mig-1g.shared.shared", "nvidia.com/gpumem", "amd.com/gpu", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := Resource(s)
		p, ok := r.MIGProfile()
		if !ok {
			if p != "" {
				t.Fatalf("MIGProfile(%q) = %q, false", s, p)
			}
			return
		}
		if p == "" || p[0] < '0' || p[0] > '9' || strings.ContainsFunc(p, func(c rune) bool {
			return (c < '0' || c > '9') && (c < 'a' || c > 'z') && c != '.' && c != '+'
		}) {
			t.Fatalf("MIGProfile(%q) = %q, not a profile", s, p)
		}
		if MIGResource(p) != r.Unshared() {
			t.Fatalf("MIGResource(%q) = %q, want %q", p, MIGResource(p), r.Unshared())
		}
		if !r.IsGPU() || !r.IsMIG() || !r.IsNVIDIA() {
			t.Fatalf("%q has profile %q but IsGPU %v, IsMIG %v, IsNVIDIA %v", s, p, r.IsGPU(), r.IsMIG(), r.IsNVIDIA())
		}
		if r.Shared().Unshared() != r.Unshared() || !r.Shared().IsShared() {
			t.Fatalf("%q: Shared %q does not round trip", s, r.Shared())
		}
	})
}
