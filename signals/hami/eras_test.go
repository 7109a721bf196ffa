package hami

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// TestNames: the table's names, from HAMi's code (eras.go cites the
// lines) and PR #1644's rename table.
func TestNames(t *testing.T) {
	tests := []struct{ key, legacy, current, legacyUUID, currentUUID string }{
		{ContainerMemoryUsed, "vGPU_device_memory_usage_in_bytes", "hami_vgpu_memory_used_bytes", "deviceuuid", "device_uuid"},
		{ContainerUtilization, "Device_utilization_desc_of_container", "hami_container_device_utilization_ratio", "deviceuuid", "device_uuid"},
		{ContainerCoresAllocated, "vGPUCoreAllocated", "hami_vgpu_core_allocated_ratio", "deviceuuid", "device_uuid"},
		{ContainerMemoryAllocated, "vGPUMemoryAllocated", "hami_vgpu_memory_allocated_bytes", "deviceuuid", "device_uuid"},
		{DeviceMemory, "GPUDeviceMemoryLimit", "hami_gpu_memory_limit_bytes", "deviceuuid", "device_uuid"},
		{HostUtilization, "HostCoreUtilization", "hami_host_gpu_utilization_ratio", "deviceuuid", "device_uuid"},
	}
	for _, tt := range tests {
		mt, ok := Lookup(tt.key)
		if !ok {
			t.Fatalf("%s missing", tt.key)
		}
		if mt.Spellings[EraLegacy].Name != tt.legacy || mt.Spellings[EraCurrent].Name != tt.current {
			t.Errorf("%s: %v", tt.key, mt.Spellings)
		}
		if !has(mt.Spellings[EraLegacy].Labels, tt.legacyUUID) || !has(mt.Spellings[EraCurrent].Labels, tt.currentUUID) {
			t.Errorf("%s: no UUID label in %v", tt.key, mt.Spellings)
		}
		for e, sp := range mt.Spellings {
			got, era, ok := MetricOf(sp.Name)
			if !ok || got.Key != tt.key || era != Era(e) {
				t.Errorf("MetricOf(%s) = %s %s", sp.Name, got.Key, era)
			}
		}
	}
	seen := map[string]bool{}
	for _, mt := range Metrics() {
		for _, sp := range mt.Spellings {
			if seen[sp.Name] {
				t.Errorf("%s spelled twice", sp.Name)
			}
			seen[sp.Name] = true
		}
	}
}

// TestEmitted: HAMi writes percentages for its *_ratio cores and
// utilisation series (dashboards/README.md:66-76 at 4707fb02) and bytes
// for memory, in both eras.
func TestEmitted(t *testing.T) {
	tests := []struct {
		key   string
		v     float64
		era   Era
		name  string
		want  float64
		label string
	}{
		{ContainerCoresAllocated, 0.3, EraCurrent, "hami_vgpu_core_allocated_ratio", 30, "container_index"},
		{ContainerCoresAllocated, 0.3, EraLegacy, "vGPUCoreAllocated", 30, "containeridx"},
		{ContainerUtilization, 0.25, EraLegacy, "Device_utilization_desc_of_container", 25, "ctrname"},
		{ContainerMemoryUsed, 1 << 30, EraCurrent, "hami_vgpu_memory_used_bytes", 1 << 30, "container"},
		{DeviceMemory, 80 << 30, EraLegacy, "GPUDeviceMemoryLimit", 80 << 30, "nodeid"},
	}
	for _, tt := range tests {
		name, labels, v := Emitted(tt.key, tt.v, tt.era)
		if name != tt.name || v != tt.want || !has(labels, tt.label) {
			t.Errorf("Emitted(%s, %v, %s) = %s %v %v", tt.key, tt.v, tt.era, name, labels, v)
		}
	}
}

// TestFormsParse: every form is PromQL, reads both eras, and names the
// GPU by uuid.
func TestFormsParse(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	forms := map[string]string{"held": HeldShare(), "used": UsedShare(), "cores": HeldCores(), "mem": HeldMemory(),
		"usedmem": UsedMemory(), "dcgm": JoinUUID(UsedShare(), "UUID")}
	for _, mt := range Metrics() {
		forms[mt.Key] = Sel(mt.Key)
	}
	for name, f := range forms {
		if _, err := p.ParseExpr(f); err != nil {
			t.Errorf("%s: %v\n%s", name, err, f)
		}
	}
	for _, want := range []string{"hami_vgpu_core_allocated_ratio", "vGPUCoreAllocated", "hami_vgpu_memory_allocated_bytes", "vGPUMemoryAllocated", `"uuid", "$1", "deviceuuid"`, "/ 100"} {
		if !strings.Contains(HeldShare(), want) {
			t.Errorf("HeldShare lacks %s", want)
		}
	}
	if !strings.Contains(forms["dcgm"], `"UUID", "$1", "uuid"`) {
		t.Errorf("JoinUUID: %s", forms["dcgm"])
	}
}
