package recommend

import (
	"slices"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// TestNoPatchWithoutContainer guards against a guessed container. A
// strategic merge matches a pod's containers by name and adds the ones it
// does not find (Kubernetes API conventions: containers has
// patchMergeKey name, k8s.io/api core/v1 types.go PodSpec.Containers), so
// at main 36bc8ff a change for a workload whose GPU container is not in
// the data named a container "main", which added a container to the real
// workload instead of changing its GPU. Without the container there is no
// patch, and the field to change is said, in ByHand and in Notes.
func TestNoPatchWithoutContainer(t *testing.T) {
	noContainer := workload.Ref{Kind: "Deployment", Namespace: "team-a", Name: "web"}
	sts := workload.Ref{Kind: "StatefulSet", Namespace: "team-b", Name: "db"}
	p := criteria.DefaultPolicy()
	for _, tt := range []struct {
		name string
		r    *Recommendation
		want string
	}{
		{"MIG slice",
			RightSize(Usage{Workload: noContainer, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: gibF}, p),
			"Deployment/team-a/web: set spec.template.spec.containers[<the GPU container>].resources.limits[nvidia.com/mig-1g.10gb] to 1, " +
				"remove nvidia.com/gpu from spec.template.spec.containers[<the GPU container>].resources.limits and .requests; " +
				"no patch is written: the container holding the GPU is not in the data (no container label on its series, and no pod spec from the cluster with one GPU container)"},
		{"dedicated GPU",
			Dedicated(Usage{Workload: sts, Model: "NVIDIA A100-SXM4-80GB", Sharing: "time-slicing", Share: 0.25, P95Utilization: 0.9,
				P99MemoryBytes: 30 * gibF, Resources: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}}, p, "training-like load"),
			"StatefulSet/team-b/db: set spec.template.spec.containers[<the GPU container>].resources.limits[nvidia.com/gpu] to 1, " +
				"remove nvidia.com/gpu.shared from spec.template.spec.containers[<the GPU container>].resources.limits and .requests; " +
				"no patch is written: the container holding the GPU is not in the data (no container label on its series, and no pod spec from the cluster with one GPU container)"},
		{"HAMi",
			HAMiResources(workload.Ref{Kind: "CronJob", Namespace: "n", Name: "c"}, 20480, 50, 10240, 0, 80*gibF, "test"),
			"CronJob/n/c: set spec.jobTemplate.spec.template.spec.containers[<the GPU container>].resources.limits[nvidia.com/gpumem] to 10240; " +
				"no patch is written: the container holding the GPU is not in the data (no container label on its series, and no pod spec from the cluster with one GPU container)"},
		// 10 GiB p99 with the default 20% margin: 12,288 MiB.
		{"MPS memory limit",
			RelieveOOM("mps", 4, 80*gibF, Tenant{Usage: Usage{Workload: noContainer, Model: h100, Sharing: "mps", Share: 0.25, P99MemoryBytes: 10 * gibF,
				Resources: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1}}}, p),
			"Deployment/team-a/web: set spec.template.spec.containers[<the GPU container>].env[CUDA_MPS_PINNED_DEVICE_MEM_LIMIT] to \"0=12288M\"; " +
				"no patch is written: the container holding the GPU is not in the data (no container label on its series, and no pod spec from the cluster with one GPU container)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.r == nil {
				t.Fatal("no recommendation")
			}
			if tt.r.Patch != nil {
				t.Errorf("a patch without the container:\n%s", tt.r.Patch.YAML)
			}
			if tt.r.ByHand != tt.want || !slices.Contains(tt.r.Notes, tt.want) {
				t.Errorf("by hand %q\nnotes %q\nwant %q", tt.r.ByHand, tt.r.Notes, tt.want)
			}
		})
	}
}
