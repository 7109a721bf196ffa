package inventory

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gpulens/gpulens/vocab"
)

func TestSharingFor(t *testing.T) {
	ts := SharingConfig{TimeSlicing: map[vocab.Resource]int{"nvidia.com/gpu": 4}}
	mps := SharingConfig{MPS: map[vocab.Resource]int{"nvidia.com/gpu": 2}}
	tests := []struct {
		name    string
		configs map[string]SharingConfig
		node    Node
		want    SharingConfig
		wantOK  bool
	}{
		{"labelled", map[string]SharingConfig{"a": ts, "b": mps}, Node{DevicePluginCfg: "b"}, mps, true},
		{"label names a missing config", map[string]SharingConfig{"a": ts}, Node{DevicePluginCfg: "b"}, SharingConfig{}, false},
		{"unlabelled, single config is the default", map[string]SharingConfig{"any": ts}, Node{}, ts, true},
		{"unlabelled, GFD says not shared", map[string]SharingConfig{"any": ts}, Node{SharingStrategy: "none"}, SharingConfig{}, false},
		{"unlabelled, default ambiguous", map[string]SharingConfig{"a": ts, "b": mps}, Node{}, SharingConfig{}, false},
		{"no configs", nil, Node{}, SharingConfig{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv := &Inventory{Sharing: tt.configs}
			got, ok := inv.SharingFor(tt.node)
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestSharedGPUs(t *testing.T) {
	ts := SharingConfig{TimeSlicing: map[vocab.Resource]int{"nvidia.com/gpu": 4}, Source: "gpu-operator/time-slicing-config"}
	mps := SharingConfig{MPS: map[vocab.Resource]int{"nvidia.com/gpu.shared": 2}, Source: "gpu-operator/mps-config"}
	migOnly := SharingConfig{TimeSlicing: map[vocab.Resource]int{"nvidia.com/mig-1g.10gb": 3}, Source: "gpu-operator/mig-config"}
	tests := []struct {
		name       string
		configs    map[string]SharingConfig
		node       Node
		want       NodeSharing
		wantSource string // substring of Source
		wantOK     bool
	}{
		{name: "GFD strategy label", node: Node{SharingStrategy: "time-slicing", Replicas: 4},
			want: NodeSharing{Strategy: "time-slicing", Replicas: 4}, wantSource: "nvidia.com/gpu.sharing-strategy=time-slicing", wantOK: true},
		{name: "GFD says MPS over a time-slicing config", configs: map[string]SharingConfig{"any": ts}, node: Node{SharingStrategy: "mps", Replicas: 2},
			want: NodeSharing{Strategy: "mps", Replicas: 2}, wantSource: "nvidia.com/gpu.sharing-strategy=mps", wantOK: true},
		{name: "GFD says none over a time-slicing config", configs: map[string]SharingConfig{"any": ts}, node: Node{SharingStrategy: "none", Replicas: 1}},
		// GFD before v0.15 labels replicas but no strategy; it had only
		// time-slicing.
		{name: "old GFD: replicas alone", node: Node{Replicas: 8},
			want: NodeSharing{Strategy: "time-slicing", Replicas: 8}, wantSource: "nvidia.com/gpu.replicas=8", wantOK: true},
		{name: "old GFD: one replica", node: Node{Replicas: 1}},
		{name: "no GFD: the node's config", configs: map[string]SharingConfig{"a": ts, "b": mps}, node: Node{DevicePluginCfg: "b"},
			want: NodeSharing{Strategy: "mps", Replicas: 2}, wantSource: "gpu-operator/mps-config", wantOK: true},
		{name: "no GFD: the only config", configs: map[string]SharingConfig{"any": ts}, node: Node{},
			want: NodeSharing{Strategy: "time-slicing", Replicas: 4}, wantSource: "gpu-operator/time-slicing-config", wantOK: true},
		{name: "no GFD: a config that shares only MIG slices", configs: map[string]SharingConfig{"any": migOnly}, node: Node{}},
		{name: "no GFD, no config", node: Node{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.node.Name = "gpu-1"
			inv := &Inventory{Available: true, Sharing: tt.configs, Nodes: map[string]Node{"gpu-1": tt.node}}
			got, ok := inv.SharedGPUs("gpu-1")
			if ok != tt.wantOK || got.Strategy != tt.want.Strategy || got.Replicas != tt.want.Replicas || !strings.Contains(got.Source, tt.wantSource) {
				t.Errorf("SharedGPUs = %+v, %v; want %+v from %q, %v", got, ok, tt.want, tt.wantSource, tt.wantOK)
			}
			if _, ok := inv.SharedGPUs("elsewhere"); ok {
				t.Error("a node the cluster lacks reads as shared")
			}
		})
	}
	if _, ok := (*Inventory)(nil).SharedGPUs("gpu-1"); ok {
		t.Error("no inventory reads as shared")
	}
}
