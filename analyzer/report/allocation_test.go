package report

import "testing"

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
