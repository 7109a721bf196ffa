package kube

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

const (
	h100 = "ip-10-0-12-34.ec2.internal"
	a100 = "ip-10-0-45-67.ec2.internal"
	l4   = "ip-10-0-78-90.ec2.internal"
	cpu  = "ip-10-0-1-10.ec2.internal"
)

func TestReadCluster(t *testing.T) {
	inv := Read(t.Context(), fakeCluster(t), testOptions(t))

	if !inv.Available || inv.ReadAt.IsZero() {
		t.Fatalf("Available=%v ReadAt=%v, want a read inventory", inv.Available, inv.ReadAt)
	}
	// The default ConfigMap gpu-operator/device-plugin-config does not
	// exist; that is the normal case and must not be reported.
	if len(inv.Skipped) != 0 {
		t.Errorf("Skipped = %q, want none", inv.Skipped)
	}

	t.Run("pods", func(t *testing.T) {
		tests := []struct {
			ns, name string
			want     inventory.Pod
		}{
			{"inference", "triton-6b8f9c7d54-x2k4q", inventory.Pod{
				Node: a100, Phase: "Running", WorkloadKind: "Deployment", WorkloadName: "triton",
				GPURequests: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}, GPUContainer: "triton", PriorityClass: "inference-critical",
			}},
			{"inference", "triton-6b8f9c7d54-q9w7z", inventory.Pod{
				Node: a100, Phase: "Running", WorkloadKind: "Deployment", WorkloadName: "triton",
				GPURequests: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}, GPUContainer: "triton", PriorityClass: "inference-critical",
			}},
			{"research", "llm-finetune-0", inventory.Pod{
				Node: h100, Phase: "Running", WorkloadKind: "StatefulSet", WorkloadName: "llm-finetune",
				GPURequests: map[vocab.Resource]int64{"nvidia.com/mig-3g.40gb": 1}, GPUContainer: "trainer", PriorityClass: "batch-low",
			}},
			{"research", "llm-finetune-1", inventory.Pod{
				Node: h100, Phase: "Running", WorkloadKind: "StatefulSet", WorkloadName: "llm-finetune",
				GPURequests: map[vocab.Resource]int64{"nvidia.com/mig-3g.40gb": 1}, GPUContainer: "trainer", PriorityClass: "batch-low",
			}},
			{"research", "nightly-eval-29431200-7hq2m", inventory.Pod{
				Node: h100, Phase: "Succeeded", WorkloadKind: "CronJob", WorkloadName: "nightly-eval",
				GPURequests: map[vocab.Resource]int64{"nvidia.com/mig-1g.10gb": 1}, GPUContainer: "eval", PriorityClass: "batch-low",
			}},
			{"notebooks", "jupyter-alice", inventory.Pod{
				Node: a100, Phase: "Running", WorkloadKind: "Pod", WorkloadName: "jupyter-alice",
				GPURequests: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}, GPUContainer: "notebook",
			}},
			{"web", "nginx-5c7588df89-kw8vt", inventory.Pod{
				Node: l4, Phase: "Running", WorkloadKind: "Deployment", WorkloadName: "nginx",
			}},
			{"gpu-operator", "nvidia-device-plugin-daemonset-8gzkx", inventory.Pod{
				Node: h100, Phase: "Running", WorkloadKind: "DaemonSet", WorkloadName: "nvidia-device-plugin-daemonset",
				PriorityClass: "system-node-critical",
			}},
		}
		if len(inv.Pods) != len(tests) {
			t.Errorf("read %d pods, want %d", len(inv.Pods), len(tests))
		}
		for _, tt := range tests {
			key := inventory.PodKey{Namespace: tt.ns, Name: tt.name}
			got, ok := inv.Pods[key]
			if !ok {
				t.Errorf("pod %v missing", key)
				continue
			}
			if got.UID == "" || got.Labels == nil {
				t.Errorf("pod %v: UID %q, labels %v: want both", key, got.UID, got.Labels)
			}
			tt.want.PodKey, tt.want.UID, tt.want.Labels = key, got.UID, got.Labels
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("pod %v (-want +got):\n%s", key, d)
			}
		}
	})

	t.Run("nodes", func(t *testing.T) {
		tests := []struct {
			name string
			want inventory.Node
		}{
			{h100, inventory.Node{
				Product: "NVIDIA-H100-80GB-HBM3", MemoryMiB: 81559, Count: 8, Replicas: 1,
				SharingStrategy: "none", MIGStrategy: "mixed",
				Capacity: map[vocab.Resource]int64{"nvidia.com/gpu": 0, "nvidia.com/mig-1g.10gb": 16,
					"nvidia.com/mig-2g.20gb": 8, "nvidia.com/mig-3g.40gb": 8},
				Taints:   []inventory.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}},
				NodePool: "h100-training",
			}},
			{a100, inventory.Node{
				Product: "NVIDIA-A100-SXM4-40GB", MemoryMiB: 40960, Count: 8, Replicas: 4,
				SharingStrategy: "time-slicing", MIGStrategy: "none", DevicePluginCfg: "a100-40gb",
				Capacity: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 32},
				Taints:   []inventory.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: "NoSchedule"}},
				NodePool: "a100-shared",
			}},
			{l4, inventory.Node{
				Product: "NVIDIA-L4", MemoryMiB: 23034, Count: 1, Replicas: 1,
				SharingStrategy: "none", MIGStrategy: "none",
				Capacity: map[vocab.Resource]int64{"nvidia.com/gpu": 1},
				NodePool: "inference-l4",
			}},
			{cpu, inventory.Node{NodePool: "system"}},
		}
		for _, tt := range tests {
			got, ok := inv.Nodes[tt.name]
			if !ok {
				t.Errorf("node %s missing", tt.name)
				continue
			}
			if !maps.Equal(got.Capacity, got.Allocatable) {
				t.Errorf("node %s: allocatable %v, want the fixture's %v", tt.name, got.Allocatable, got.Capacity)
			}
			tt.want.Name, tt.want.Labels, tt.want.Allocatable = tt.name, got.Labels, got.Allocatable
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("node %s (-want +got):\n%s", tt.name, d)
			}
		}
		var names []string
		for _, n := range inv.GPUNodes() {
			names = append(names, n.Name)
		}
		if want := []string{h100, a100, l4}; !slices.Equal(names, slices.Sorted(slices.Values(want))) {
			t.Errorf("GPUNodes = %v, want %v sorted", names, want)
		}
	})

	t.Run("teams", func(t *testing.T) {
		for ns, want := range map[string]string{
			"inference": "serving",
			"research":  "research",
			"web":       "platform",
			"notebooks": "notebooks", // no team label
			"gone":      "gone",      // unknown namespace
		} {
			if got := inv.Team(ns); got != want {
				t.Errorf("Team(%q) = %q, want %q", ns, got, want)
			}
		}
	})

	t.Run("quotas", func(t *testing.T) {
		want := map[string][]inventory.Quota{"inference": {{
			Name: "gpu-quota",
			Hard: map[string]int64{"requests.nvidia.com/gpu": 4, "requests.nvidia.com/gpu.shared": 16},
			Used: map[string]int64{"requests.nvidia.com/gpu": 0, "requests.nvidia.com/gpu.shared": 2},
		}}}
		if d := cmp.Diff(want, inv.Quotas); d != "" {
			t.Errorf("quotas (-want +got):\n%s", d)
		}
	})

	t.Run("pdbs", func(t *testing.T) {
		tests := []struct {
			ns, pod   string
			want      []string
			disrupted int32
		}{
			{"inference", "triton-6b8f9c7d54-x2k4q", []string{"triton"}, 1},
			{"research", "llm-finetune-1", []string{"llm-finetune"}, 0}, // matchExpressions
			{"research", "nightly-eval-29431200-7hq2m", nil, 0},
			{"notebooks", "jupyter-alice", nil, 0},
		}
		for _, tt := range tests {
			var names []string
			for _, p := range inv.PDBsFor(tt.ns, tt.pod) {
				names = append(names, p.Name)
				if p.DisruptionsAllowed != tt.disrupted {
					t.Errorf("%s: inventory.PDB %s allows %d disruptions, want %d", tt.pod, p.Name, p.DisruptionsAllowed, tt.disrupted)
				}
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("PDBsFor(%s) = %v, want %v", tt.pod, names, tt.want)
			}
		}
		if got := inv.PDBs["research"][0].MaxUnavailable; got != "0" {
			t.Errorf("llm-finetune maxUnavailable = %q, want 0", got)
		}
		if got := inv.PDBs["inference"][0].MinAvailable; got != "1" {
			t.Errorf("triton minAvailable = %q, want 1", got)
		}
	})

	t.Run("priority classes", func(t *testing.T) {
		want := map[string]int32{"inference-critical": 1000000, "batch-low": 100, "system-node-critical": 2000001000}
		if d := cmp.Diff(want, inv.PriorityClasses); d != "" {
			t.Errorf("priority classes (-want +got):\n%s", d)
		}
	})

	t.Run("sharing", func(t *testing.T) {
		want := map[string]inventory.SharingConfig{
			"a100-40gb": {TimeSlicing: map[vocab.Resource]int{"nvidia.com/gpu": 4}, RenameByDefault: true,
				FailRequestsGT1: true, MIGStrategy: "none", Source: "gpu-operator/time-slicing-config"},
			"h100-mig": {MIGStrategy: "mixed", Source: "gpu-operator/time-slicing-config"},
		}
		if d := cmp.Diff(want, inv.Sharing); d != "" {
			t.Errorf("sharing (-want +got):\n%s", d)
		}
		sc, ok := inv.SharingFor(inv.Nodes[a100])
		if !ok || sc.TimeSlicing["nvidia.com/gpu"] != 4 {
			t.Errorf("SharingFor(A100 node) = %+v, %v; want the a100-40gb config", sc, ok)
		}
		// Two configs and no label: the ClusterPolicy default is unknown.
		if sc, ok := inv.SharingFor(inv.Nodes[l4]); ok {
			t.Errorf("SharingFor(L4 node) = %+v, want none", sc)
		}
	})
}

var (
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	podsGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
)

func forbidden(resource string) k8stesting.ReactionFunc {
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		gr := a.GetResource().GroupResource()
		return true, nil, apierrors.NewForbidden(gr, "", errors.New(
			`User "system:serviceaccount:monitoring:gpulens" cannot `+a.GetVerb()+` resource "`+resource+`"`))
	}
}

func TestReadForbidden(t *testing.T) {
	tests := []struct {
		verb, resource string
		skipped        string // prefix of the single Skipped entry
		check          func(t *testing.T, inv *inventory.Inventory)
	}{
		{"list", "resourcequotas", "resourcequotas: forbidden", func(t *testing.T, inv *inventory.Inventory) {
			if len(inv.Quotas) != 0 {
				t.Errorf("quotas = %v, want none", inv.Quotas)
			}
		}},
		{"list", "replicasets", "replicasets: forbidden", func(t *testing.T, inv *inventory.Inventory) {
			// Deployments are still found, from pod-template-hash.
			p := inv.Pods[inventory.PodKey{Namespace: "inference", Name: "triton-6b8f9c7d54-x2k4q"}]
			if p.WorkloadKind != "Deployment" || p.WorkloadName != "triton" || !p.WorkloadInferred {
				t.Errorf("triton pod workload = %s/%s inferred=%v, want inferred Deployment/triton",
					p.WorkloadKind, p.WorkloadName, p.WorkloadInferred)
			}
		}},
		{"list", "jobs", "jobs: forbidden", func(t *testing.T, inv *inventory.Inventory) {
			w, inferred := inv.WorkloadOf("research", "nightly-eval-29431200-7hq2m")
			if w != (workload.Ref{Kind: "CronJob", Namespace: "research", Name: "nightly-eval"}) || !inferred {
				t.Errorf("eval pod workload = %+v, want inferred CronJob/nightly-eval", w)
			}
		}},
		{"list", "pods", "pods: forbidden", func(t *testing.T, inv *inventory.Inventory) {
			if len(inv.Pods) != 0 {
				t.Errorf("%d pods, want none", len(inv.Pods))
			}
			if w, inferred := inv.WorkloadOf("inference", "triton-6b8f9c7d54-x2k4q"); w != (workload.Ref{Kind: "Deployment", Namespace: "inference", Name: "triton"}) || !inferred {
				t.Errorf("workload = %+v, want inferred Deployment/triton", w)
			}
		}},
		{"list", "nodes", "nodes: forbidden", func(t *testing.T, inv *inventory.Inventory) {
			if len(inv.GPUNodes()) != 0 {
				t.Errorf("GPUNodes = %v, want none", inv.GPUNodes())
			}
		}},
		{"list", "namespaces", "namespaces: forbidden", func(t *testing.T, inv *inventory.Inventory) {
			if got := inv.Team("inference"); got != "inference" {
				t.Errorf("Team = %q, want the namespace", got)
			}
		}},
		{"get", "configmaps", "configmap gpu-operator/time-slicing-config: forbidden", func(t *testing.T, inv *inventory.Inventory) {
			if len(inv.Sharing) != 0 {
				t.Errorf("sharing = %v, want none", inv.Sharing)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.resource, func(t *testing.T) {
			c := fakeCluster(t)
			c.PrependReactor(tt.verb, tt.resource, forbidden(tt.resource))
			inv := Read(t.Context(), c, testOptions(t))

			// The default device-plugin-config is absent in the fixture; a
			// forbidden GET on it is reported too, since absence is unproven.
			skipped := slices.DeleteFunc(slices.Clone(inv.Skipped), func(s string) bool {
				return tt.resource == "configmaps" && strings.HasPrefix(s, "configmap gpu-operator/device-plugin-config: forbidden")
			})
			if len(skipped) != 1 || !strings.HasPrefix(skipped[0], tt.skipped) {
				t.Fatalf("Skipped = %q, want one entry starting %q", inv.Skipped, tt.skipped)
			}
			if !inv.Available {
				t.Error("Available = false; a forbidden list still means the cluster answered")
			}
			tt.check(t, inv)
			// Everything else is read.
			if tt.resource != "pods" && len(inv.Pods) != 8 {
				t.Errorf("%d pods, want 8", len(inv.Pods))
			}
			if tt.resource != "nodes" && len(inv.Nodes) != 4 {
				t.Errorf("%d nodes, want 4", len(inv.Nodes))
			}
			if tt.resource != "priorityclasses" && len(inv.PriorityClasses) != 3 {
				t.Errorf("%d priority classes, want 3", len(inv.PriorityClasses))
			}
			if tt.resource != "configmaps" && len(inv.Sharing) != 2 {
				t.Errorf("%d sharing configs, want 2", len(inv.Sharing))
			}
		})
	}
}

func TestReadUnreachableStopsEarly(t *testing.T) {
	c := fakeCluster(t)
	dial := errors.New(`Get "https://10.100.0.1:443/api/v1/namespaces?limit=500": dial tcp 10.100.0.1:443: connect: connection refused`)
	c.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, dial })

	inv := Read(t.Context(), c, testOptions(t))
	if inv.Available {
		t.Error("Available = true for an API server that never answered")
	}
	if len(inv.Skipped) != 1 || !strings.Contains(inv.Skipped[0], "unreachable") || !strings.Contains(inv.Skipped[0], "connection refused") {
		t.Errorf("Skipped = %q, want one entry saying the API is unreachable and why", inv.Skipped)
	}
	if n := len(c.Actions()); n != 1 {
		t.Errorf("%d requests after the first failed to connect, want none", n-1)
	}
}

func TestReadNilClient(t *testing.T) {
	inv := Read(t.Context(), nil, Options{})
	if inv.Available || len(inv.Skipped) != 1 {
		t.Errorf("Read(nil) = Available %v, Skipped %q; want unavailable with a reason", inv.Available, inv.Skipped)
	}
}

func TestReadDeadline(t *testing.T) {
	c := fakeCluster(t)
	// Nodes are read once the namespaces have answered: the API server is
	// reachable, so a timeout there is reported and the rest is attempted.
	c.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, context.DeadlineExceeded
	})
	inv := Read(t.Context(), c, testOptions(t))
	if !inv.Available || !slices.ContainsFunc(inv.Skipped, func(s string) bool { return strings.HasPrefix(s, "nodes: timed out") }) {
		t.Errorf("Available %v, Skipped %q; want available with nodes timed out", inv.Available, inv.Skipped)
	}
	if len(inv.Pods) != 8 {
		t.Errorf("%d pods, want 8", len(inv.Pods))
	}
}
