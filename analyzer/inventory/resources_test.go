package inventory

import "testing"

func TestIsGPUResource(t *testing.T) {
	for name, want := range map[string]bool{
		"nvidia.com/gpu":          true,
		"nvidia.com/gpu.shared":   true,
		"nvidia.com/mig-1g.10gb":  true,
		"nvidia.com/mig-7g.141gb": true,
		"nvidia.com/gpu.product":  false,
		"amd.com/gpu":             false,
		"cpu":                     false,
	} {
		if got := IsGPUResource(name); got != want {
			t.Errorf("IsGPUResource(%q) = %v, want %v", name, got, want)
		}
	}
}
