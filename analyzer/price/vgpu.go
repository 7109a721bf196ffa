package price

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// VGPU is an NVIDIA vGPU type, the GPU a virtual machine's guest driver
// sees: a slice of one board's framebuffer ("A100-10C": 10 GB of an A100
// PCIe 40GB), time-sliced with the board's other VMs, or MIG-backed
// ("A100-2-10C": a 2-slice GPU instance). NVML, and dcgm-exporter's
// modelName with it, names such a GPU by its type, after "GRID " (older
// guest drivers) or "NVIDIA ": "GRID A100-10C", "NVIDIA H100-20C".
//
// A vGPU is priced as its share of its board (VGPU.Share), never as the
// whole board, and gets no MIG advice: MIG is set up on the hypervisor
// host, which a guest cannot reach.
type VGPU struct {
	// Board is the type's board code: "A100", "A100D", "H100XM", "T4".
	Board string
	// Slices is a MIG-backed type's GPU-instance slices ("A100-2-10C":
	// 2); 0 for a time-sliced type.
	Slices int
	// FramebufferGB is the profile's framebuffer in GB as its name says;
	// 0 stands for 512 MB on old boards ("M60-0B").
	FramebufferGB int
	// Series is the license series: C (compute), Q (virtual
	// workstation), B (virtual PC) or A (virtual applications).
	Series byte
	// Attr is a MIG-backed type's attribute (ME, NOME, MEALL, GFX).
	Attr string
}

// vgpuType is the grammar of NVIDIA's vGPU type names, as NVIDIA's
// vgpu-device-manager parses them (pkg/types/vgpu_type.go: time-sliced
// "<gpu>-<gb><series>", MIG-backed "<gpu>-<g>-<gb><series>[ME|NOME|MEALL|GFX]").
// The board code must hold a letter, and the name no space:
// product names such as "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"
// or "NVIDIA A100 80GB PCIe" end in "GB" or hold spaces, and never match.
var vgpuType = regexp.MustCompile(`^([A-Z0-9]*[A-Z][A-Z0-9]*)-(?:([1-9])-)?(0|[1-9][0-9]{0,3})([ABCQ])(ME|NOME|MEALL|GFX)?$`)

// ParseVGPU reads a vGPU type from an NVML product name or dcgm-exporter
// modelName ("GRID A100-10C", "NVIDIA H100-20C", "GRID T4-16Q", or the
// bare type "A100D-80C"); false for any other name, a whole GPU's
// included. It is the one parser of vGPU names: prices, the catalog and
// the right-sizing rules all ask it.
func ParseVGPU(model string) (VGPU, bool) {
	n := strings.TrimSpace(model)
	for _, prefix := range []string{"GRID ", "NVIDIA "} {
		if len(n) > len(prefix) && strings.EqualFold(n[:len(prefix)], prefix) {
			n = strings.TrimLeft(n[len(prefix):], " ")
			break
		}
	}
	m := vgpuType.FindStringSubmatch(strings.ToUpper(n))
	if m == nil || strings.ContainsAny(n, " \t") {
		return VGPU{}, false
	}
	if m[5] != "" && m[2] == "" {
		return VGPU{}, false // attributes belong to MIG-backed types only
	}
	v := VGPU{Board: m[1], Series: m[4][0], Attr: m[5]}
	v.FramebufferGB, _ = strconv.Atoi(m[3])
	if m[2] != "" {
		v.Slices, _ = strconv.Atoi(m[2])
	}
	return v, true
}

// Type is v's type name: "A100-10C", "A100-2-10CME".
func (v VGPU) Type() string {
	if v.Slices == 0 {
		return fmt.Sprintf("%s-%d%c", v.Board, v.FramebufferGB, v.Series)
	}
	return fmt.Sprintf("%s-%d-%d%c%s", v.Board, v.Slices, v.FramebufferGB, v.Series, v.Attr)
}

// VGPUBoard is the physical board a vGPU type's board code stands for.
type VGPUBoard struct {
	// Product is the board as NVIDIA's tables name it.
	Product string
	// FramebufferGB is the board's framebuffer in the GB of its type
	// names: that of the type holding the whole board ("A100-40C",
	// "H200-141C"), so a profile's share is the ratio of the two numbers.
	FramebufferGB int
	// Key is the catalog key the board is priced by; empty where the
	// catalog has none, and a vGPU of it has no price unless the price
	// file names the vGPU itself.
	Key string
}

// vgpuBoards are the board codes of NVIDIA's vGPU types, from the tables
// "Virtual GPU Types for Supported GPUs" of NVIDIA AI Enterprise release 6,
// appendix "NVIDIA AI Enterprise and NVIDIA vGPU (C-Series)"
// (https://docs.nvidia.com/ai-enterprise/release-6/latest/appendix/vgpu.html):
// each table names its board and lists its types, the largest holding the
// whole framebuffer ("A100-40C" 40960 MB on the A100 PCIe 40GB, "A100D-80C"
// 81920 MB on the A100 PCIe 80GB, "H100-80C" 81920 MB on the H100 PCIe
// 80GB). Those tables list C-series types only; that the Q, B and A series
// of the same board use the same code ("GRID T4-16Q") is NVIDIA's naming
// in the vGPU software user guide, not confirmed here by a table. A code
// not listed is a board whose framebuffer is not known here: its vGPUs'
// share, and so their price, is unknown rather than guessed.
var vgpuBoards = map[string]VGPUBoard{
	// Hopper.
	"H100":   {"NVIDIA H100 PCIe 80GB", 80, "H100-80GB"},
	"H100XM": {"NVIDIA H100 SXM5 80GB", 80, "H100-80GB"},
	"H100L":  {"NVIDIA H100 PCIe 94GB (H100 NVL)", 94, "H100-NVL-94GB"},
	"H100XL": {"NVIDIA H100 SXM5 94GB", 94, ""},
	"H100XS": {"NVIDIA H100 SXM5 64GB", 64, ""},
	"H200":   {"NVIDIA H200 PCIe 141GB (H200 NVL)", 141, "H200-141GB"},
	"H200X":  {"NVIDIA H200 SXM5 141GB", 141, "H200-141GB"},
	"H800":   {"NVIDIA H800 PCIe 80GB", 80, "H800-80GB"},
	"H800XM": {"NVIDIA H800 SXM5 80GB", 80, "H800-80GB"},
	"H800L":  {"NVIDIA H800 PCIe 94GB (H800 NVL)", 94, ""},
	"H20":    {"NVIDIA H20 SXM5 96GB", 96, ""},
	"H20X":   {"NVIDIA H20 SXM5 141GB", 141, ""},
	// Ampere.
	"A100":   {"NVIDIA A100 PCIe 40GB", 40, "A100-40GB"},
	"A100X":  {"NVIDIA A100 HGX 40GB", 40, "A100-40GB"},
	"A100D":  {"NVIDIA A100 PCIe 80GB", 80, "A100-80GB"},
	"A100DX": {"NVIDIA A100 HGX 80GB", 80, "A100-80GB"},
	"A800":   {"NVIDIA A800 PCIe 40GB", 40, ""},
	"A800D":  {"NVIDIA A800 PCIe 80GB", 80, ""},
	"A800DX": {"NVIDIA A800 HGX 80GB", 80, ""},
	"A30":    {"NVIDIA A30", 24, "A30"},
	"A40":    {"NVIDIA A40", 48, ""},
	"A16":    {"NVIDIA A16 (one of its 4 GPUs)", 16, ""},
	"A10":    {"NVIDIA A10", 24, "A10"},
	// Ada Lovelace.
	"L40":  {"NVIDIA L40", 48, ""},
	"L40S": {"NVIDIA L40S", 48, "L40S"},
	"L20":  {"NVIDIA L20", 48, ""},
	"L4":   {"NVIDIA L4", 24, "L4"},
	"L2":   {"NVIDIA L2", 24, ""},
	// Turing and Volta.
	"T4":     {"NVIDIA Tesla T4", 16, "T4"},
	"V100X":  {"NVIDIA Tesla V100 SXM2", 16, ""},
	"V100DX": {"NVIDIA Tesla V100 SXM2 32GB", 32, ""},
	"V100D":  {"NVIDIA Tesla V100 PCIe 32GB", 32, ""},
	"V100S":  {"NVIDIA Tesla V100S PCIe 32GB", 32, ""},
	"V100L":  {"NVIDIA Tesla V100 FHHL", 16, ""},
}

// LookupVGPUBoard is the board of a vGPU type's board code.
func LookupVGPUBoard(code string) (VGPUBoard, bool) {
	b, ok := vgpuBoards[strings.ToUpper(code)]
	return b, ok
}

// Share is the part of its board v holds: its framebuffer over the
// board's. False where the board is not known here, or the name's numbers
// do not make a share (0 GB, which stands for 512 MB, or more than the
// board holds): the price is then unknown, never the whole board's.
func (v VGPU) Share() (VGPUBoard, float64, bool) {
	b, ok := LookupVGPUBoard(v.Board)
	if !ok || v.FramebufferGB <= 0 || v.FramebufferGB > b.FramebufferGB {
		return b, 0, false
	}
	return b, float64(v.FramebufferGB) / float64(b.FramebufferGB), true
}
