package price

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestParseVGPU: the vGPU names guest drivers report (the two real
// scrapes of analyzer/report/testdata/vgpu-vks.prom among them) are read
// as a type of a board; whole GPUs' product names that look alike are not.
func TestParseVGPU(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
		want VGPU
	}{
		{"GRID A100-10C", true, VGPU{Board: "A100", FramebufferGB: 10, Series: 'C'}},
		{"NVIDIA H100-20C", true, VGPU{Board: "H100", FramebufferGB: 20, Series: 'C'}},
		{"GRID A100-40C", true, VGPU{Board: "A100", FramebufferGB: 40, Series: 'C'}},
		{"GRID A100-8C", true, VGPU{Board: "A100", FramebufferGB: 8, Series: 'C'}},
		{"GRID T4-16Q", true, VGPU{Board: "T4", FramebufferGB: 16, Series: 'Q'}},
		{"NVIDIA A100D-80C", true, VGPU{Board: "A100D", FramebufferGB: 80, Series: 'C'}},
		{"GRID A100D-2-20C", true, VGPU{Board: "A100D", Slices: 2, FramebufferGB: 20, Series: 'C'}},
		{"GRID A100-1-5CME", true, VGPU{Board: "A100", Slices: 1, FramebufferGB: 5, Series: 'C', Attr: "ME"}},
		{"NVIDIA H100XM-40C", true, VGPU{Board: "H100XM", FramebufferGB: 40, Series: 'C'}},
		{"GRID M60-0B", true, VGPU{Board: "M60", FramebufferGB: 0, Series: 'B'}},
		{"  grid a100-10c ", true, VGPU{Board: "A100", FramebufferGB: 10, Series: 'C'}},
		{"A100-4C", true, VGPU{Board: "A100", FramebufferGB: 4, Series: 'C'}},
		// Whole GPUs and catalog keys.
		{"NVIDIA A100-SXM4-80GB", false, VGPU{}},
		{"NVIDIA A100-SXM4-40GB", false, VGPU{}},
		{"NVIDIA A100-PCIE-40GB", false, VGPU{}},
		{"NVIDIA H100 80GB HBM3", false, VGPU{}},
		{"NVIDIA A100 80GB PCIe", false, VGPU{}},
		{"NVIDIA H100 NVL", false, VGPU{}},
		{"Tesla T4", false, VGPU{}},
		{"Tesla V100-SXM2-16GB", false, VGPU{}},
		{"NVIDIA L4", false, VGPU{}},
		{"H100-80GB", false, VGPU{}},
		{"A100-40GB", false, VGPU{}},
		{"RTX-PRO-6000", false, VGPU{}},
		{"NVIDIA RTX 6000 Ada-48C", false, VGPU{}}, // a board code with spaces: not read, so unknown rather than misread
		{"GRID A100-10CME", false, VGPU{}},         // attributes are MIG-backed types' only
		{"GRID A100-010C", false, VGPU{}},
		{"GRID A100-10D", false, VGPU{}},
		{"GRID 100-10C", false, VGPU{}},
		{"", false, VGPU{}},
		{"GRID ", false, VGPU{}},
	} {
		got, ok := ParseVGPU(c.name)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseVGPU(%q) = %+v, %v; want %+v, %v", c.name, got, ok, c.want, c.ok)
		}
		if ok {
			if _, isModel := LookupModel(c.name); isModel {
				t.Errorf("LookupModel(%q) found a catalog model: a vGPU must not read as its whole board", c.name)
			}
		}
	}
}

// TestVGPUPrice: a vGPU is its framebuffer's share of its board's price
// (NVIDIA AI Enterprise 6's vGPU tables: A100-40C holds an A100 PCIe
// 40GB, A100D-80C an A100 PCIe 80GB, H100-80C an H100 PCIe 80GB), with its
// board's discount; unknown where the board's framebuffer or price is.
func TestVGPUPrice(t *testing.T) {
	p, err := DefaultPrices().Override([]byte(`prices: {A100-40GB: 2.00, A100-80GB: 4.00, H100-80GB: 8.00, T4: 0.40, "GRID A10-4Q": 0.09}
discounts: {H100-80GB: 0.25}
`), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		model string
		want  float64 // USD per hour; < 0: unknown
	}{
		{"GRID A100-10C", 0.25 * 2.00},
		{"GRID A100-8C", 0.2 * 2.00},
		{"GRID A100-40C", 2.00},
		{"NVIDIA A100D-80C", 4.00},
		{"NVIDIA A100D-20C", 0.25 * 4.00},
		{"NVIDIA H100-20C", 0.25 * 8.00 * 0.75},
		{"GRID T4-16Q", 0.40},
		{"GRID T4-4Q", 0.25 * 0.40},
		{"GRID A10-4Q", 0.09},           // priced by its own name
		{"GRID M60-0B", -1},             // board not known
		{"GRID A40-24C", -1},            // board known, no price
		{"GRID A100-80C", -1},           // more than an A100 PCIe 40GB holds
		{"NVIDIA A100-SXM4-40GB", 2.00}, // a whole GPU stays whole
	} {
		got, err := p.PerHour(c.model)
		switch {
		case c.want < 0 && !errors.Is(err, ErrNoPrice):
			t.Errorf("PerHour(%q) = %v, %v; want no price", c.model, got, err)
		case c.want >= 0 && (err != nil || math.Abs(got-c.want) > 1e-12):
			t.Errorf("PerHour(%q) = %v, %v; want %v", c.model, got, err, c.want)
		}
		if c.want >= 0 && p.Source(c.model) == "" {
			t.Errorf("Source(%q) is empty", c.model)
		}
	}
	if src := p.Source("GRID A100-10C"); !strings.Contains(src, "10/40 of the A100-40GB's price") {
		t.Errorf("source %q: want the share of the board said", src)
	}
	if _, err := p.PerHour("GRID A40-24C"); err == nil || !strings.Contains(err.Error(), "NVIDIA A40") {
		t.Errorf("error %v: want the board named", err)
	}
}

// FuzzParseVGPU: the parser never panics, what it reads prints back as
// the same type, a share is within (0, 1], and a name with a space or
// ending in "GB" is never a vGPU.
func FuzzParseVGPU(f *testing.F) {
	for _, s := range []string{"GRID A100-10C", "NVIDIA H100-20C", "GRID T4-16Q", "NVIDIA A100D-80C", "GRID A100-1-5CME",
		"NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3", "NVIDIA A100 80GB PCIe", "GRID M60-0B", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, ok := ParseVGPU(s)
		if !ok {
			return
		}
		if strings.HasSuffix(strings.ToUpper(strings.TrimSpace(s)), "GB") {
			t.Fatalf("%q ends in GB and read as vGPU %+v", s, v)
		}
		again, ok := ParseVGPU(v.Type())
		if !ok || again != v {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, v, v.Type(), again, ok)
		}
		if _, share, ok := v.Share(); ok && (share <= 0 || share > 1) {
			t.Fatalf("%q: share %v", s, share)
		}
		if _, isModel := LookupModel(s); isModel {
			t.Fatalf("%q is a vGPU and a catalog model", s)
		}
	})
}
