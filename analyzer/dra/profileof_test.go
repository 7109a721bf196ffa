package dra

import "testing"

// TestMIGProfileOf: the inverse of Request.Device and DeviceOfResource.
func TestMIGProfileOf(t *testing.T) {
	for in, want := range map[string]string{
		"nvidia.com/mig-1g.20gb":        "1g.20gb",
		"nvidia.com/mig-1g.20gb.shared": "1g.20gb",
		"mig.nvidia.com 3g.40gb":        "3g.40gb",
		"mig.nvidia.com 1g.10gb ×2":     "1g.10gb",
		"mig.nvidia.com ×all":           "",
		"mig.nvidia.com":                "",
		"gpu.nvidia.com ×2":             "",
		"nvidia.com/gpu":                "",
	} {
		if got := MIGProfileOf(in); got != want {
			t.Errorf("MIGProfileOf(%q) = %q, want %q", in, got, want)
		}
	}
}
