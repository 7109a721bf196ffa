package dra

import (
	"slices"
	"testing"

	"github.com/gpulens/gpulens/vocab"
)

func TestClaimFor(t *testing.T) {
	// The driver's demo/specs/quickstart/v1/gpu-test4.yaml, cut to two
	// containers: one slice each, and a third container using the claim
	// whole.
	c := &Claim{Template: "mig-devices", Requests: []Request{
		{Name: "mig-1g-5gb-0", DeviceClass: ClassMIG, MIGProfile: "1g.5gb"},
		{Name: "mig-3g-20gb", DeviceClass: ClassMIG, MIGProfile: "3g.20gb"},
	}, Containers: map[string][]string{"ctr0": {"mig-1g-5gb-0"}, "ctr3": {"mig-3g-20gb"}, "monitor": nil, "nic": {"nic"}}}
	for _, tt := range []struct {
		container string
		want      []string // profiles; nil with ok false
		ok        bool
	}{
		{"ctr0", []string{"1g.5gb"}, true},
		{"ctr3", []string{"3g.20gb"}, true},
		{"monitor", []string{"1g.5gb", "3g.20gb"}, true},
		{"nic", nil, false}, // it names a request that is no GPU
		{"other", nil, false},
	} {
		got, ok := c.For(tt.container)
		var profiles []string
		if ok {
			for _, r := range got.Requests {
				profiles = append(profiles, r.MIGProfile)
			}
		}
		if ok != tt.ok || !slices.Equal(profiles, tt.want) {
			t.Errorf("For(%q) = %q, %v; want %q, %v", tt.container, profiles, ok, tt.want, tt.ok)
		}
	}
	if len(c.Requests) != 2 {
		t.Errorf("For changed the claim: %+v", c.Requests)
	}
}

func TestDeviceOfResource(t *testing.T) {
	for _, tt := range []struct {
		in   vocab.Resource
		want string
	}{
		{"nvidia.com/gpu", "gpu.nvidia.com"},
		{"nvidia.com/gpu.shared", "gpu.nvidia.com"},
		{"nvidia.com/mig-3g.40gb", "mig.nvidia.com 3g.40gb"},
		{"nvidia.com/mig-1g.10gb.shared", "mig.nvidia.com 1g.10gb"},
		{"nvidia.com/mig-", "nvidia.com/mig-"},
		{"example.com/fpga", "example.com/fpga"},
		{"", ""},
	} {
		if got := DeviceOfResource(tt.in); got != tt.want {
			t.Errorf("DeviceOfResource(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
