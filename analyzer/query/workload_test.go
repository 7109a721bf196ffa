package query

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals/native"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// The engine's inference and the inventory's must name the same workload
// for every pod: the engine groups the figures, the inventory names pods
// that are gone. The names cover every generated form, the precedence
// between forms, and near misses; random names from the generators'
// alphabets cover the rest.
func TestWorkloadExprMatchesInferWorkload(t *testing.T) {
	pods := []string{
		"web-7d9f8b6c4d-x2x9z", "web-5f4d8c9b7-2bq4m", "api-server-6c8f9d7b5c-lk2zt",
		"nightly-29412345-bq4mz", "report-gen-29500000-7zxkq",
		"train-3-h5k2d", "shard-0-abcde", "etl-h5k2d", "node-agent-b7r4w",
		"db-0", "kafka-12", "redis-cluster-2",
		"alice-jupyter", "etl-nightly-mon", "leaky-worker", "pretrain",
		"web-7d9f8b6c4d-24567", // all digits: an ordinal wins
		"web-4567894-bq4mz",    // digits of the hash alphabet: a hash wins
		"-12345", "foo-", "a--12", "x-aeiou", "x-bcdfghjklm", "x-bcdf", "-7d9f8b6c4d-x2x9z",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(alphabet string, n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for range 300 {
		name := pick("abcxyz", 1+rng.IntN(4))
		for range 1 + rng.IntN(3) {
			switch rng.IntN(5) {
			case 0:
				name += "-" + pick(randomAlphabetForTest, 5)
			case 1:
				name += "-" + pick("456789bcdf", 6+rng.IntN(5))
			case 2:
				name += "-" + pick("0123456789", 1+rng.IntN(9))
			case 3:
				name += "-" + pick("abcdefghijklmnopqrstuvwxyz0123456789", 1+rng.IntN(7))
			default:
				name += "-"
			}
		}
		pods = append(pods, strings.Trim(name, "-"))
	}

	f := newFleet(t)
	seen := map[string]bool{}
	for _, p := range pods {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		f.series(t, labels.FromStrings("__name__", "x", "pod", p), 1, 2, constant(1))
	}
	src := f.commit(t)
	vec, err := src.Query(context.Background(), withWorkload("x"), minute(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(vec) != len(seen) {
		t.Fatalf("got %d series, want %d", len(vec), len(seen))
	}
	for _, s := range vec {
		pod := string(s.Metric["pod"])
		want := inventory.InferWorkload("", pod)
		got := workload.Ref{Kind: string(s.Metric[LabelWorkloadKind]), Name: string(s.Metric[LabelWorkload])}
		if got != want {
			t.Errorf("pod %q: engine says %s %q, inventory says %s %q", pod, got.Kind, got.Name, want.Kind, want.Name)
		}
	}
}

const randomAlphabetForTest = "bcdfghjklmnpqrstvwxz2456789"

// A Deployment rolled out mid-window: the old pod on one GPU for minutes
// 1-100, the new one on another from minute 91 (ten minutes of overlap)
// to the end. One workload, seen at every step, with both pods' samples.
func TestWorkloadAcrossPodGenerations(t *testing.T) {
	f := newFleet(t)
	oldPod, newPod := "web-7d9f8b6c4d-x2x9z", "web-5f4d8c9b7-b7r4w"
	nativeGPU(t, f, "node-1", "GPU-1", a100, 1, 240, 0.1)
	nativeGPU(t, f, "node-2", "GPU-2", a100, 1, 240, 0.1)
	container{node: "node-1", uuid: "GPU-1", model: a100, ns: "shop", pod: oldPod, sharing: "none", share: 1,
		util: constant(0.05), mem: constant(4 * gib)}.write(t, f, 1, 100)
	container{node: "node-2", uuid: "GPU-2", model: a100, ns: "shop", pod: newPod, sharing: "none", share: 1,
		util: constant(0.09), mem: constant(6 * gib)}.write(t, f, 91, 240)
	src := f.commit(t)
	res, err := Analyze(context.Background(), src, native.Schema{}, window)
	if err != nil {
		t.Fatal(err)
	}
	const oldSteps, newSteps = 100, 150
	want := []fleet.Workload{{
		WorkloadKey: fleet.WorkloadKey{Ref: workload.Ref{Kind: "Deployment", Namespace: "shop", Name: "web", Container: "main"}, Model: a100},
		Sharing:     "none", AllocationPath: dp, Share: 1, Pods: []string{newPod, oldPod}, GPUs: []fleet.GPUKey{{Node: "node-1", UUID: "GPU-1"}, {Node: "node-2", UUID: "GPU-2"}},
		Steps: 240, Coverage: 1, HeldHours: 4,
		AllocationSteps: oldSteps + newSteps, Replicas: float64(oldSteps+newSteps) / 240, AllocatedGPUHours: float64(oldSteps+newSteps) / 60,
		AvgUtilization: (oldSteps*0.05 + newSteps*0.09) / (oldSteps + newSteps),
		// The busiest allocation at each step: 0.09 for 150 of 240 steps.
		P95Utilization: 0.09, UtilizationSteps: oldSteps + newSteps, UtilizationCoverage: 1,
		PeakMemoryBytes: 6 * gib, P99MemoryBytes: 6 * gib, MemorySteps: oldSteps + newSteps,
	}}
	compareAll(t, "workload", res.Workloads, want)
}

// kube-state-metrics' owner series name the owners of GPU pods, climbed
// to the Deployment and the CronJob; pods that held no GPU are not read.
func TestPodOwnersFromKubeStateMetrics(t *testing.T) {
	f := newFleet(t)
	nativeGPU(t, f, "node-1", "GPU-1", a100, 1, 240, 0.1)
	for _, p := range []string{"web-7d9f8b6c4d-x2x9z", "agent-b7r4w", "nightly-29500000-bq4mz"} {
		container{node: "node-1", uuid: "GPU-1", model: a100, ns: "shop", pod: p, sharing: "time-slicing", share: 0.25,
			util: constant(0.05), mem: constant(gib)}.write(t, f, 1, 240)
	}
	ksm := func(name string, lbls ...string) labels.Labels {
		return labels.FromStrings(append([]string{"__name__", name, "namespace", "shop", "job", "kube-state-metrics"}, lbls...)...)
	}
	// The old pod is gone by minute 100; its series stops there.
	f.series(t, ksm("kube_pod_owner", "pod", "web-7d9f8b6c4d-x2x9z", "owner_kind", "ReplicaSet", "owner_name", "web-7d9f8b6c4d", "owner_is_controller", "true"), 1, 100, constant(1))
	f.series(t, ksm("kube_pod_owner", "pod", "agent-b7r4w", "owner_kind", "DaemonSet", "owner_name", "agent", "owner_is_controller", "true"), 1, 240, constant(1))
	f.series(t, ksm("kube_pod_owner", "pod", "nightly-29500000-bq4mz", "owner_kind", "Job", "owner_name", "nightly-29500000", "owner_is_controller", "true"), 1, 240, constant(1))
	f.series(t, ksm("kube_pod_owner", "pod", "cpu-only", "owner_kind", "<none>", "owner_name", "<none>", "owner_is_controller", "false"), 1, 240, constant(1))
	f.series(t, ksm("kube_pod_owner", "pod", "log-shipper-x2x9z", "owner_kind", "DaemonSet", "owner_name", "log-shipper", "owner_is_controller", "true"), 1, 240, constant(1))
	f.series(t, ksm("kube_replicaset_owner", "replicaset", "web-7d9f8b6c4d", "owner_kind", "Deployment", "owner_name", "web", "owner_is_controller", "true"), 1, 100, constant(1))
	f.series(t, ksm("kube_job_owner", "job_name", "nightly-29500000", "owner_kind", "CronJob", "owner_name", "nightly", "owner_is_controller", "true"), 1, 240, constant(1))
	src := f.commit(t)
	res, err := Analyze(context.Background(), src, native.Schema{}, window)
	if err != nil {
		t.Fatal(err)
	}
	want := map[fleet.PodRef]fleet.Owner{
		{Namespace: "shop", Name: "web-7d9f8b6c4d-x2x9z"}:   {Kind: "Deployment", Name: "web"},
		{Namespace: "shop", Name: "agent-b7r4w"}:            {Kind: "DaemonSet", Name: "agent"},
		{Namespace: "shop", Name: "nightly-29500000-bq4mz"}: {Kind: "CronJob", Name: "nightly"},
	}
	if !reflect.DeepEqual(res.PodOwners, want) {
		t.Errorf("pod owners %v, want %v", res.PodOwners, want)
	}
}
