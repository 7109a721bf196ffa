package nvml

import (
	"math"
	"testing"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestCUDAVersion(t *testing.T) {
	for _, tc := range []struct {
		in   int
		want string
	}{
		{12040, "12.4"},
		{12000, "12.0"},
		{11080, "11.8"},
		{13010, "13.1"},
		{0, ""},
		{-1, ""},
	} {
		if got := cudaVersion(tc.in); got != tc.want {
			t.Errorf("cudaVersion(%d) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCString(t *testing.T) {
	arr := func(s string, n int) []int8 {
		b := make([]int8, n)
		for i := range min(len(s), n) {
			b[i] = int8(s[i])
		}
		return b
	}
	for _, tc := range []struct {
		name string
		in   []int8
		want string
	}{
		{"bus id", arr("00000000:3B:00.0", 32), "00000000:3B:00.0"},
		{"empty", arr("", 32), ""},
		{"no terminator", arr("0000:3b:00.0", 12), "0000:3b:00.0"},
		{"stops at first NUL", append(arr("ab", 3), 'c'), "ab"},
		{"nil", nil, ""},
	} {
		if got := cString(tc.in); got != tc.want {
			t.Errorf("%s: cString = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestMemorySlices(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name         string
		inst, parent float64
		want         int
	}{
		{"H100 1g.10gb exact", 10 * gib, 80 * gib, 1},
		{"H100 1g.10gb real sizes", 9856 << 20, 81559 << 20, 1},
		{"H100 3g.40gb real sizes", 40192 << 20, 81559 << 20, 4},
		{"H100 7g.80gb real sizes", 80384 << 20, 81559 << 20, 8},
		{"A100 40GB 1g.5gb", 4864 << 20, 40960 << 20, 1},
		{"A100 40GB 2g.10gb", 9856 << 20, 40960 << 20, 2},
		{"never above 8", 100 * gib, 80 * gib, 8},
		{"tiny rounds up to 1", 1 << 20, 80 * gib, 1},
		{"unknown parent", 10 * gib, math.NaN(), 0},
		{"unknown instance", 0, 80 * gib, 0},
	} {
		if got := memorySlices(tc.inst, tc.parent); got != tc.want {
			t.Errorf("%s: memorySlices = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestProfileFromName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"NVIDIA H100 80GB HBM3 MIG 1g.10gb", "1g.10gb"},
		{"NVIDIA A100-SXM4-40GB MIG 1c.2g.10gb", "1c.2g.10gb"},
		{"NVIDIA H100 80GB HBM3 MIG 1g.10gb+me", "1g.10gb+me"},
		{"NVIDIA H100 80GB HBM3", ""},
		{"", ""},
	} {
		if got := profileFromName(tc.in); got != tc.want {
			t.Errorf("profileFromName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseProfile(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   profile
		wantOK bool
	}{
		{"1g.10gb", profile{computeSlices: 1, memoryGB: 10}, true},
		{"3g.40gb", profile{computeSlices: 3, memoryGB: 40}, true},
		{"1c.2g.20gb", profile{computeSlices: 1, memoryGB: 20}, true},
		{"1g.10gb+me", profile{computeSlices: 1, memoryGB: 10}, true},
		{"7g.141gb", profile{computeSlices: 7, memoryGB: 141}, true},
		{"", profile{}, false},
		{"xg.10gb", profile{}, false},
		{"1g", profile{}, false},
		{"10gb", profile{}, false},
		{"1g.10tb", profile{}, false},
	} {
		got, ok := parseProfile(tc.in)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("parseProfile(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestProfileFromAttributes(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name   string
		attrs  gonvml.DeviceAttributes
		parent float64
		want   string
	}{
		{"H100 1g.10gb", gonvml.DeviceAttributes{GpuInstanceSliceCount: 1, ComputeInstanceSliceCount: 1, MemorySizeMB: 9856}, 81559 << 20, "1g.10gb"},
		{"H100 3g.40gb", gonvml.DeviceAttributes{GpuInstanceSliceCount: 3, ComputeInstanceSliceCount: 3, MemorySizeMB: 40192}, 81559 << 20, "3g.40gb"},
		{"A100 compute sub-slice", gonvml.DeviceAttributes{GpuInstanceSliceCount: 2, ComputeInstanceSliceCount: 1, MemorySizeMB: 9856}, 40960 << 20, "1c.2g.10gb"},
		{"mock sizes", gonvml.DeviceAttributes{GpuInstanceSliceCount: 1, ComputeInstanceSliceCount: 1, MemorySizeMB: 10240}, 80 * gib, "1g.10gb"},
		{"unknown parent", gonvml.DeviceAttributes{GpuInstanceSliceCount: 2, MemorySizeMB: 20480}, 0, "2g.20gb"},
		{"no slices", gonvml.DeviceAttributes{MemorySizeMB: 20480}, 80 * gib, ""},
	} {
		if got := profileFromAttributes(tc.attrs, tc.parent); got != tc.want {
			t.Errorf("%s: profileFromAttributes = %q, want %q", tc.name, got, tc.want)
		}
	}
}
