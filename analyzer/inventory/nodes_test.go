package inventory

import "testing"

func TestHasTaint(t *testing.T) {
	n := Node{Taints: []Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}, {Key: "spot", Effect: "PreferNoSchedule"}}}
	tests := []struct {
		key    string
		effect string
		want   bool
	}{
		{"nvidia.com/gpu", "NoSchedule", true},
		{"nvidia.com/gpu", "NoExecute", false},
		{"spot", "NoSchedule", false},
		{"spot", "PreferNoSchedule", true},
	}
	for _, tt := range tests {
		if got := n.HasTaint(tt.key, tt.effect); got != tt.want {
			t.Errorf("HasTaint(%s, %s) = %v, want %v", tt.key, tt.effect, got, tt.want)
		}
	}
}
