package sim

import (
	"strings"
	"testing"
)

// TestParseHAMi: mode hami takes HAMi's default split, pods carry their
// HAMi resources, and the errors name the field.
func TestParseHAMi(t *testing.T) {
	ok := `hami: {metrics: legacy}
nodes:
  - name: n1
    system: dgxa100-80gb
    gpus: 1
    sharing: [{gpus: [0], mode: hami}]
    pods:
      - {namespace: a, name: p, gpu: 0, load: inference, memory: 6GiB, hami: {cores: 30, memory: 40GiB}}
`
	sc, err := Parse([]byte(ok), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := Parse([]byte(strings.Replace(ok, "mode: hami", "mode: hami, deviceMemoryScaling: 1.5", 1)), "s.yaml")
	if err != nil || scaled.Nodes[0].Sharing[0].MemoryScaling != 1.5 {
		t.Errorf("deviceMemoryScaling 1.5: %v, %+v", err, scaled)
	}
	if sc.HAMi.Era().String() != "legacy" || sc.Nodes[0].Pods[0].HAMi.Cores != 30 {
		t.Errorf("parsed %+v", sc.HAMi)
	}
	if got := sc.Nodes[0].Pods[0].HAMi.MemoryMiB(80 << 30); got != 40960 {
		t.Errorf("gpumem %d MiB, want 40960", got)
	}
	if got := (HAMiLimits{MemoryPercentage: 25}).MemoryMiB(80 << 30); got != 20480 {
		t.Errorf("gpumem-percentage 25 of 80 GiB: %d MiB, want 20480", got)
	}
	for _, tt := range []struct{ edit, want string }{
		{strings.Replace(ok, "legacy", "v2", 1), `hami.metrics: unknown HAMi metric era "v2"`},
		{strings.Replace(ok, "cores: 30", "cores: 130", 1), "hami.cores: 130 out of range"},
		{strings.Replace(ok, "memory: 40GiB", "memory: 40GiB, memoryPercentage: 50", 1), "set memory (nvidia.com/gpumem) or memoryPercentage, not both"},
		{strings.Replace(ok, "mode: hami", "mode: time-slicing, replicas: 2", 1), "pods[0].hami: GPU 0 is not shared with mode hami"},
		// deviceMemoryScaling is HAMi's: a time-slicing group has none, and
		// a scaling is positive.
		{strings.Replace(ok, "mode: hami", "mode: time-slicing, replicas: 2, deviceMemoryScaling: 1.5", 1), "sharing[0].deviceMemoryScaling: 1.5: only a positive scaling of mode hami"},
		{strings.Replace(ok, "mode: hami", "mode: hami, deviceMemoryScaling: -1", 1), "sharing[0].deviceMemoryScaling: -1: only a positive scaling of mode hami"},
	} {
		if _, err := Parse([]byte(tt.edit), "s.yaml"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want %q", err, tt.want)
		}
	}
}
