package recommend

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// TestPatchAsksForWhatTheConfigAdvertises guards the resource a tenant's
// patch asks for when the same recommendation writes a device plugin
// config for its node. gpulens's configs replicate nvidia.com/gpu with
// renameByDefault: true, under which the NVIDIA device plugin advertises
// the replicas as nvidia.com/gpu.shared and nvidia.com/gpu no more
// (NVIDIA/k8s-device-plugin api/config/v1/replicas.go,
// ReplicatedResources.UnmarshalJSON; resources.go DefaultSharedRename;
// consts.go DefaultSharedResourceNameSuffix = ".shared"; timeSlicing and
// mps share ReplicatedResources). The first case is the demo's
// team-nlp/leaky-worker: 52.75 GiB p99 (63.3 GiB with the 20% margin) on
// a time-sliced A100-80GB of 3 tenants, holding nvidia.com/gpu; 80 GiB
// holds one such peak, so the config is time-slicing-1. At main 36bc8ff
// its patch asked for nvidia.com/gpu: 1 beside that config, a request no
// node under it can meet.
func TestPatchAsksForWhatTheConfigAdvertises(t *testing.T) {
	p := criteria.DefaultPolicy()
	leaky := workload.Ref{Kind: "Deployment", Namespace: "team-nlp", Name: "leaky-worker", Container: "main"}
	tenant := func(sharing vocab.Sharing, p99GiB float64, held vocab.Resource) Tenant {
		return Tenant{Usage: Usage{Workload: leaky, Model: "NVIDIA A100-SXM4-80GB", Sharing: sharing, Share: 1.0 / 3,
			P99MemoryBytes: p99GiB * gibF, Resources: map[vocab.Resource]int64{held: 1}}}
	}
	for _, tt := range []struct {
		name     string
		r        *Recommendation
		config   string
		limits   map[vocab.Resource]int64
		remove   []vocab.Resource
		to       string
		envLimit string
	}{
		{"the demo's time-sliced tenant", RelieveOOM("time-slicing", 3, 80*gibF, tenant("time-slicing", 52.75, "nvidia.com/gpu"), p),
			"time-slicing-1", map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}, []vocab.Resource{"nvidia.com/gpu"}, "nvidia.com/gpu.shared", ""},
		// 10 GiB with margin is 12 GiB: 80 GiB holds 6, the config
		// cuts 4 replicas to 3.
		{"an MPS tenant holding nvidia.com/gpu", RelieveOOM("mps", 4, 80*gibF, tenant("mps", 10, "nvidia.com/gpu"), p),
			"mps-3", map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}, []vocab.Resource{"nvidia.com/gpu"}, "nvidia.com/gpu.shared", "0=12288M"},
		{"an MPS tenant holding nvidia.com/gpu.shared", RelieveOOM("mps", 4, 80*gibF, tenant("mps", 10, "nvidia.com/gpu.shared"), p),
			"mps-3", nil, nil, "nvidia.com/gpu.shared", "0=12288M"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			if r == nil || r.Sharing == nil || r.Patch == nil {
				t.Fatalf("want a config and a patch, got %+v", r)
			}
			if r.Sharing.Name() != tt.config || !strings.Contains(r.DevicePluginConfig, "renameByDefault: true") ||
				!strings.Contains(r.DevicePluginConfig, "- name: nvidia.com/gpu\n") {
				t.Errorf("config %s:\n%s\nwant %s renaming nvidia.com/gpu", r.Sharing.Name(), r.DevicePluginConfig, tt.config)
			}
			ch := r.Patch.Change
			if !maps.Equal(ch.Limits, tt.limits) || !slices.Equal(ch.Remove, tt.remove) || ch.Env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] != tt.envLimit {
				t.Errorf("change %+v, want limits %v, remove %v, env limit %q", ch, tt.limits, tt.remove, tt.envLimit)
			}
			if strings.Contains(r.Patch.JSON, `"nvidia.com/gpu":1`) {
				t.Errorf("the patch asks for nvidia.com/gpu, which the config renames: %s", r.Patch.JSON)
			}
			if r.To != tt.to {
				t.Errorf("to %s, want %s", r.To, tt.to)
			}
		})
	}
}
