package dra

import "testing"

func TestProfileOf(t *testing.T) {
	tests := []struct {
		name      string
		selectors []string
		want      string
	}{
		{"the driver's demo form", []string{`device.attributes['gpu.nvidia.com'].profile == '1g.5gb'`}, "1g.5gb"},
		{"index form, double quotes", []string{`device.attributes["gpu.nvidia.com"]["profile"] == "3g.40gb"`}, "3g.40gb"},
		{"literal first", []string{`'2g.20gb' == device.attributes['gpu.nvidia.com'].profile`}, "2g.20gb"},
		{"ANDed with the product", []string{`device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3' && device.attributes['gpu.nvidia.com'].profile == '1g.10gb'`}, "1g.10gb"},
		{"two selectors, one pins", []string{`device.attributes['gpu.nvidia.com'].architecture == 'Hopper'`, ProfileSelector("1g.20gb")}, "1g.20gb"},
		{"either of two profiles", []string{`device.attributes['gpu.nvidia.com'].profile == '1g.10gb' || device.attributes['gpu.nvidia.com'].profile == '1g.20gb'`}, ""},
		{"selectors disagree", []string{ProfileSelector("1g.10gb"), ProfileSelector("2g.20gb")}, ""},
		// tests/bats/specs/gpu-simple-mig.yaml of the driver: bounds, no name.
		{"capacity bounds only", []string{`device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity("10Gi"))`}, ""},
		{"no selectors", nil, ""},
		{"another driver's profile attribute", []string{`device.attributes['example.com'].profile == '1g.10gb'`}, ""},
	}
	for _, tt := range tests {
		if got := ProfileOf(tt.selectors); got != tt.want {
			t.Errorf("%s: ProfileOf = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := ProfileOf([]string{ProfileSelector("7g.80gb")}); got != "7g.80gb" {
		t.Errorf("ProfileSelector does not round-trip: %q", got)
	}
}

func TestMentionsProfile(t *testing.T) {
	for expr, want := range map[string]bool{
		ProfileSelector("1g.10gb"): true,
		`device.capacity['gpu.nvidia.com'].multiprocessors.isGreaterThan(quantity("10"))`: true,
		`device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-80GB'`:      false,
		`device.attributes['gpu.nvidia.com'].type == 'gpu'`:                               false,
	} {
		if got := MentionsProfile(expr); got != want {
			t.Errorf("MentionsProfile(%q) = %v, want %v", expr, got, want)
		}
	}
}

func TestRequestDevice(t *testing.T) {
	for _, tt := range []struct {
		r    Request
		want string
	}{
		{Request{DeviceClass: ClassGPU, AllocationMode: ModeExactCount, Count: 1}, "gpu.nvidia.com"},
		{Request{DeviceClass: ClassGPU, AllocationMode: ModeExactCount, Count: 2}, "gpu.nvidia.com ×2"},
		{Request{DeviceClass: ClassMIG, AllocationMode: ModeExactCount, Count: 1, MIGProfile: "1g.10gb"}, "mig.nvidia.com 1g.10gb"},
		{Request{DeviceClass: ClassGPU, AllocationMode: ModeAll}, "gpu.nvidia.com ×all"},
	} {
		if got := tt.r.Device(); got != tt.want {
			t.Errorf("Device() = %q, want %q", got, tt.want)
		}
	}
}
