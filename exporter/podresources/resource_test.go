package podresources

import (
	"testing"

	"github.com/gpulens/gpulens/vocab"
)

func TestIsGPUResource(t *testing.T) {
	extra := []vocab.Resource{"example.com/gpu-ts", "nvidia.com/gpu-4x"}
	tests := []struct {
		name        vocab.Resource
		want        bool
		wantProfile string
	}{
		{name: "nvidia.com/gpu", want: true},
		{name: "nvidia.com/gpu.shared", want: true},
		{name: "nvidia.com/mig-1g.10gb", want: true, wantProfile: "1g.10gb"},
		{name: "nvidia.com/mig-1g.10gb.shared", want: true, wantProfile: "1g.10gb"},
		{name: "nvidia.com/mig-7g.141gb", want: true, wantProfile: "7g.141gb"},
		{name: "nvidia.com/mig-1c.3g.20gb", want: true, wantProfile: "1c.3g.20gb"},
		{name: "nvidia.com/mig-1g.10gb+me", want: true, wantProfile: "1g.10gb+me"},
		{name: "example.com/gpu-ts", want: true},
		{name: "nvidia.com/gpu-4x", want: true},
		{name: "nvidia.com/mig-", want: false},
		{name: "nvidia.com/mig-.shared", want: false},
		{name: "nvidia.com/mig-Big", want: false},
		{name: "nvidia.com/mig-1g 10gb", want: false},
		{name: "nvidia.com/gpus", want: false},
		{name: "amd.com/gpu", want: false},
		{name: "cpu", want: false},
		{name: "", want: false},
	}
	for _, tt := range tests {
		t.Run(string(tt.name), func(t *testing.T) {
			if got := IsGPUResource(tt.name, extra); got != tt.want {
				t.Errorf("IsGPUResource(%q) = %v, want %v", tt.name, got, tt.want)
			}
			if got, _ := tt.name.MIGProfile(); got != tt.wantProfile {
				t.Errorf("MIGProfile(%q) = %q, want %q", tt.name, got, tt.wantProfile)
			}
		})
	}
	if IsGPUResource("example.com/gpu-ts", nil) {
		t.Error("custom name accepted without being configured")
	}
}
