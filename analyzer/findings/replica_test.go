package findings

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/vocab"
)

// replicatedResult is one workload of kind/name whose pods each hold a whole
// A100-80GB for the whole week at the given average use, grouped as the
// engine groups allocations into a workload (query's workloads: pooled
// average, replicas = allocation steps over the union of steps).
func replicatedResult(kind, name string, pods []string, utils []float64) *fleet.Result {
	var allocs []fleet.Allocation
	var gpus []fleet.GPU
	w := fleet.Workload{WorkloadKey: fleet.WorkloadKey{Ref: workload.Ref{Kind: kind, Namespace: "serving", Name: name, Container: "main"}, Model: a100},
		Sharing: "none", Share: 1, Steps: 10080, Coverage: 1, HeldHours: 168}
	var utilSum float64
	for i, pod := range pods {
		uuid := fmt.Sprintf("GPU-%d", i)
		a := alloc(pod, uuid, a100, "none", "", 1, utils[i], min(1, utils[i]*1.2), 30*GiB)
		a.Namespace, a.Node, a.Workload, a.WorkloadKind, a.AllocatedGPUHours = "serving", fmt.Sprintf("node-%d", i), name, kind, 168
		allocs = append(allocs, a)
		g := gpu(uuid, a100, "none", 80*GiB)
		g.Node = a.Node
		gpus = append(gpus, g)
		w.Pods = append(w.Pods, pod)
		w.GPUs = append(w.GPUs, fleet.GPUKey{Node: a.Node, UUID: uuid})
		w.AllocationSteps += a.Steps
		w.AllocatedGPUHours += a.AllocatedGPUHours
		w.UtilizationSteps += a.UtilizationSteps
		utilSum += a.AvgUtilization * float64(a.UtilizationSteps)
		w.MemorySteps += a.MemorySteps
		w.PeakMemoryBytes, w.P99MemoryBytes = 30*GiB, 30*GiB
		w.P95Utilization = max(w.P95Utilization, a.P95Utilization)
	}
	w.AvgUtilization = utilSum / float64(w.UtilizationSteps)
	w.Replicas, w.UtilizationCoverage = float64(len(pods)), 1
	res := result(nil, gpus)
	res.Allocations, res.Workloads = allocs, []fleet.Workload{w}
	return res
}

// TestIdleReplica: a replica idle all week among busy siblings is named
// on its own, priced at its own GPU, with the advice its controller
// takes; uneven load that all works, an all-idle workload, a rollout to
// an idle pod and one pod are left to the workload's verdict. The five
// cases that name a replica fail at main 36bc8ff, where only the
// workload's average is judged (the 47% of a whole A100: an
// underused-gpu at info, $0 saved, no pod named); the other four guard
// against a new false alarm and hold at main too.
//
// A StatefulSet scaled down removes its highest ordinal first ("Pods
// are terminated in reverse order, from {N-1..0}", Kubernetes docs,
// StatefulSets, Deployment and Scaling Guarantees:
// https://kubernetes.io/docs/concepts/workloads/controllers/statefulset/#deployment-and-scaling-guarantees;
// and the StatefulSet Basics tutorial, Scaling Down: the controller
// deletes one Pod at a time in reverse order of its ordinal,
// https://kubernetes.io/docs/tutorials/stateful-application/basic-stateful-set/#scaling-down):
// only an idle highest ordinal is given back by scaling down by one.
func TestIdleReplica(t *testing.T) {
	perHour, err := price.DefaultPrices().PerHour(a100)
	if err != nil {
		t.Fatal(err)
	}
	// One whole A100-80GB a month: the table's hourly price × 730 h.
	gpuMonth := perHour * 730
	sts := []string{"llm-serve-0", "llm-serve-1", "llm-serve-2", "llm-serve-3"}
	deploy := []string{"llm-serve-7d9f8b6c4d-b7r4w", "llm-serve-7d9f8b6c4d-k7r2t", "llm-serve-7d9f8b6c4d-x2x9z"}
	tests := []struct {
		name  string
		kind  string
		pods  []string
		utils []float64
		// idle are the replicas named on their own, each with the scale
		// command its advice gives, "" where no scale-down fits.
		idle map[string]string
		// workloadKind is the workload's own verdict, "" for none, over
		// workloadPods of its pods.
		workloadKind vocab.Kind
		workloadPods int
		// gone are pods deleted an hour before the window's end.
		gone map[string]bool
	}{
		// Replicas 0–2 at 55–70%, replica 3 at 0.5%: 3 busy replicas
		// average 62.3%, above underused's 60%, so the workload's
		// verdict is gone with the idle replica's GPU taken out of it.
		// 4 replicas, one fewer: 3.
		{name: "highest ordinal idle", kind: "StatefulSet", pods: sts, utils: []float64{0.55, 0.62, 0.70, 0.005},
			idle: map[string]string{"llm-serve-3": "kubectl -n serving scale statefulset llm-serve --current-replicas=4 --replicas=3"}},
		// Scaling down would remove llm-serve-3, which is busy.
		{name: "middle ordinal idle", kind: "StatefulSet", pods: sts, utils: []float64{0.55, 0.005, 0.62, 0.70},
			idle: map[string]string{"llm-serve-1": ""}},
		// The two highest idle: down to 2 removes both; each finding
		// prices its own GPU.
		{name: "two highest ordinals idle", kind: "StatefulSet", pods: sts, utils: []float64{0.62, 0.66, 0.01, 0.005},
			idle: map[string]string{
				"llm-serve-2": "kubectl -n serving scale statefulset llm-serve --current-replicas=4 --replicas=2",
				"llm-serve-3": "kubectl -n serving scale statefulset llm-serve --current-replicas=4 --replicas=3",
			}},
		// A Deployment removes whichever replica its controller ranks
		// first, not a chosen one: no scale advice.
		{name: "deployment replica idle", kind: "Deployment", pods: deploy, utils: []float64{0.60, 0.01, 0.66},
			idle: map[string]string{"llm-serve-7d9f8b6c4d-k7r2t": ""}},
		// The busy replicas at 30%: still underused, and the workload's
		// verdict is over the three of them only.
		{name: "idle replica beside underused ones", kind: "StatefulSet", pods: sts, utils: []float64{0.30, 0.30, 0.30, 0.005},
			idle:         map[string]string{"llm-serve-3": "kubectl -n serving scale statefulset llm-serve --current-replicas=4 --replicas=3"},
			workloadKind: vocab.KindUnderusedGPU, workloadPods: 3},
		// 70/40/15/8%: every replica above the idle threshold (5%).
		{name: "uneven but working", kind: "StatefulSet", pods: sts, utils: []float64{0.70, 0.40, 0.15, 0.08},
			workloadKind: vocab.KindUnderusedGPU, workloadPods: 4},
		{name: "all idle", kind: "StatefulSet", pods: sts, utils: []float64{0.005, 0.01, 0.002, 0.004},
			workloadKind: vocab.KindIdleAllocation, workloadPods: 4},
		// A rollout: the old pod served, the new one is idle. One
		// replica whose use changed, not an idle sibling.
		{name: "rollout to an idle pod", kind: "Deployment", pods: deploy[:2], utils: []float64{0.60, 0.01}, gone: map[string]bool{deploy[0]: true},
			workloadKind: vocab.KindUnderusedGPU, workloadPods: 2},
		{name: "one pod", kind: "StatefulSet", pods: sts[:1], utils: []float64{0.005},
			workloadKind: vocab.KindIdleAllocation, workloadPods: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := replicatedResult(tt.kind, "llm-serve", tt.pods, tt.utils)
			for i := range res.Allocations {
				if tt.gone[res.Allocations[i].Pod] {
					res.Allocations[i].SinceLastSeen = time.Hour
				}
			}
			r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
			var wl *Finding
			replicas := map[string]Finding{}
			var cost float64
			for i, f := range r.Findings {
				if f.Workload != "llm-serve" {
					continue
				}
				cost += f.MonthlyCostUSD
				if len(f.Pods) == 1 && len(tt.pods) > 1 {
					replicas[f.Pod] = f
				} else if wl != nil {
					t.Errorf("two workload verdicts: %s; %s", wl.Summary, f.Summary)
				} else {
					wl = &r.Findings[i]
				}
			}
			// Every GPU of the workload is priced once: its findings'
			// costs add up to the GPUs held, never more.
			if tt.workloadKind != "" && math.Abs(cost-float64(len(tt.pods))*gpuMonth) > 0.01 {
				t.Errorf("the workload's findings cost $%.2f a month, want %d GPU-months, $%.2f", cost, len(tt.pods), float64(len(tt.pods))*gpuMonth)
			}
			switch {
			case tt.workloadKind == "" && wl != nil:
				t.Errorf("workload verdict %s: %s, want none", wl.Kind, wl.Summary)
			case tt.workloadKind != "" && (wl == nil || wl.Kind != tt.workloadKind || len(wl.Pods) != tt.workloadPods):
				t.Errorf("workload verdict %+v, want %s over %d pods", wl, tt.workloadKind, tt.workloadPods)
			case wl != nil && wl.Evidence["replicas"] != float64(tt.workloadPods):
				// Its savings are per replica × replicas held at once:
				// the idle replica's GPU must not be among them.
				t.Errorf("workload verdict over %.2f replicas, want %d", wl.Evidence["replicas"], tt.workloadPods)
			}
			for pod := range replicas {
				if _, want := tt.idle[pod]; !want {
					t.Errorf("replica named: %s", replicas[pod].Summary)
				}
			}
			for pod, command := range tt.idle {
				f, ok := replicas[pod]
				if !ok {
					t.Errorf("no finding names %s:\n%s", pod, summaries(r))
					continue
				}
				if f.Kind != vocab.KindIdleAllocation || f.WorkloadKind != tt.kind || len(f.GPUs) != 1 || !strings.Contains(f.Summary, pod) {
					t.Errorf("got %s %s/%s pod %s on %v: %s; want idle-allocation of %s", f.Kind, f.WorkloadKind, f.Workload, f.Pod, f.GPUs, f.Summary, pod)
				}
				if !f.CostKnown || math.Abs(f.MonthlyCostUSD-gpuMonth) > 0.01 {
					t.Errorf("%s costs $%.2f a month, want one A100-80GB month, $%.2f", pod, f.MonthlyCostUSD, gpuMonth)
				}
				rec := f.Recommendation
				if command != "" {
					if rec == nil || rec.Action != recommend.ActionFewerReplicas || rec.Workload.Kind != "StatefulSet" || rec.Workload.Name != "llm-serve" ||
						!strings.Contains(rec.Summary, command) {
						t.Errorf("%s: recommendation %+v, want the StatefulSet scaled down: %s", pod, rec, command)
					}
					if math.Abs(f.MonthlySavingsUSD-gpuMonth) > 0.01 {
						t.Errorf("%s saves $%.2f a month, want $%.2f", pod, f.MonthlySavingsUSD, gpuMonth)
					}
					continue
				}
				// Scaling down would remove a busy replica: no change to
				// make, the GPU-month is at stake, not saved.
				if rec != nil || f.MonthlySavingsUSD != 0 || !strings.Contains(f.Summary, "endpoints") {
					t.Errorf("%s: recommendation %+v saving $%.2f (%s); want none, and the load balancer's endpoints to check", pod, rec, f.MonthlySavingsUSD, f.Summary)
				}
			}
		})
	}
}

// TestIdleReplicaFromStore is the idle highest ordinal of TestIdleReplica
// written by each exporter and layout (the stock GPU Operator's among
// them) into a store and read back by the query set: the replica is named
// with its GPU-month and the StatefulSet's scale-down, and no other pod.
// At main 36bc8ff it fails: the four replicas are one 47% average, an
// info underused-gpu naming no pod.
func TestIdleReplicaFromStore(t *testing.T) {
	s, err := sim.Load(filepath.Join("testdata", "workloads", "idle-replica.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	perHour, err := price.DefaultPrices().PerHour(a100)
	if err != nil {
		t.Fatal(err)
	}
	gpuMonth := perHour * 730
	for _, m := range modes {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			r := runScenario(t, s, m, nil)
			var named []Finding
			for _, f := range r.Findings {
				if f.Namespace == "serving" && f.Pod != "" {
					named = append(named, f)
				}
			}
			if len(named) != 1 {
				t.Fatalf("%d findings name a pod, want llm-serve-3's:\n%s", len(named), summaries(r))
			}
			f := named[0]
			if f.Kind != vocab.KindIdleAllocation || f.Pod != "llm-serve-3" || f.WorkloadKind != "StatefulSet" || f.Workload != "llm-serve" {
				t.Errorf("got %s of %s/%s pod %s, want idle-allocation of StatefulSet llm-serve's llm-serve-3", f.Kind, f.WorkloadKind, f.Workload, f.Pod)
			}
			if math.Abs(f.MonthlyCostUSD-gpuMonth) > 0.01 || math.Abs(f.MonthlySavingsUSD-gpuMonth) > 0.01 {
				t.Errorf("costs $%.2f, saves $%.2f a month; want one A100-80GB month, $%.2f", f.MonthlyCostUSD, f.MonthlySavingsUSD, gpuMonth)
			}
			if rec := f.Recommendation; rec == nil || !strings.Contains(rec.Summary, "--current-replicas=4 --replicas=3") {
				t.Errorf("recommendation %+v, want the StatefulSet scaled from 4 to 3", rec)
			}
		})
	}
}

// TestIdleReplicaThroughDRA: each replica's GPU comes from its own
// ResourceClaim (a ResourceClaimTemplate's): the idle replica's finding
// names its claim only, and the workload's verdict over the busy ones no
// longer lists it. At main 36bc8ff no finding names the replica.
func TestIdleReplicaThroughDRA(t *testing.T) {
	pods := []string{"llm-serve-0", "llm-serve-1", "llm-serve-2", "llm-serve-3"}
	res := replicatedResult("StatefulSet", "llm-serve", pods, []float64{0.30, 0.30, 0.30, 0.005})
	w := &res.Workloads[0]
	w.AllocationPath = vocab.AllocationPathDRA
	for i := range res.Allocations {
		a := &res.Allocations[i]
		a.AllocationPath, a.Claim = vocab.AllocationPathDRA, fleet.ClaimRef{Namespace: "serving", Name: a.Pod + "-gpu"}
		w.Claims = append(w.Claims, a.Claim)
	}
	r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
	var replica, wl *Finding
	for i, f := range r.Findings {
		switch {
		case f.Pod == "llm-serve-3":
			replica = &r.Findings[i]
		case f.Workload == "llm-serve":
			wl = &r.Findings[i]
		}
	}
	if replica == nil || wl == nil {
		t.Fatalf("want a finding on llm-serve-3 and one on the workload:\n%s", summaries(r))
	}
	if want := []string{"serving/llm-serve-3-gpu"}; !slices.Equal(replica.Claims, want) || !strings.Contains(replica.Summary, want[0]) {
		t.Errorf("replica's claims %q (%s), want %q", replica.Claims, replica.Summary, want)
	}
	if want := []string{"serving/llm-serve-0-gpu", "serving/llm-serve-1-gpu", "serving/llm-serve-2-gpu"}; !slices.Equal(wl.Claims, want) {
		t.Errorf("workload's claims %q, want %q", wl.Claims, want)
	}
}
