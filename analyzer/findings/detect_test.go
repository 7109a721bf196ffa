package findings

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

const (
	h100 = "NVIDIA H100 80GB HBM3"
	a100 = "NVIDIA A100-SXM4-80GB"
	GiB  = 1 << 30
)

var t0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// result is a one-week window at one-minute steps, each allocation its
// own workload (a bare pod).
func result(allocs []fleet.Allocation, gpus []fleet.GPU) *fleet.Result {
	var ws []fleet.Workload
	for i, a := range allocs {
		allocs[i].Workload, allocs[i].WorkloadKind = a.Pod, "Pod"
		ws = append(ws, fleet.Workload{
			WorkloadKey: fleet.WorkloadKey{Ref: workload.Ref{Kind: "Pod", Namespace: a.Namespace, Name: a.Pod, Container: a.Container}, Model: a.Model, MIGProfile: a.MIGProfile},
			Sharing:     a.Sharing, Share: a.Share, Pods: []string{a.Pod}, GPUs: []fleet.GPUKey{{Node: a.Node, UUID: a.UUID}},
			Steps: a.Steps, Coverage: a.Coverage, HeldHours: a.HeldHours, AllocationSteps: a.Steps, Replicas: 1, AllocatedGPUHours: a.AllocatedGPUHours,
			AvgUtilization: a.AvgUtilization, P95Utilization: a.P95Utilization, UtilizationSteps: a.UtilizationSteps, UtilizationCoverage: a.UtilizationCoverage,
			PeakMemoryBytes: a.PeakMemoryBytes, P99MemoryBytes: a.P99MemoryBytes, MemorySteps: a.MemorySteps,
		})
	}
	return &fleet.Result{Schema: "native", Window: fleet.Window{Start: t0, End: t0.Add(168 * time.Hour), Step: time.Minute},
		ExpectedSteps: 10080, Allocations: allocs, Workloads: ws, GPUs: gpus}
}

// alloc is a full-week allocation; mutate the copy for each case.
func alloc(pod, uuid, model string, sharing vocab.Sharing, profile string, share, avg, p95, mem float64) fleet.Allocation {
	return fleet.Allocation{
		AllocationKey: fleet.AllocationKey{Node: "node-1", Namespace: "team-a", Pod: pod, Container: "main", UUID: uuid},
		Model:         model, Sharing: sharing, MIGProfile: profile, Share: share,
		HeldHours: 168, Steps: 10080, Coverage: 1, AvgUtilization: avg, P95Utilization: p95, UtilizationSteps: 10080, UtilizationCoverage: 1,
		PeakMemoryBytes: mem, P99MemoryBytes: mem, MemorySteps: 10080, LastMemoryBytes: mem,
	}
}

func gpu(uuid, model string, sharing vocab.Sharing, mem float64) fleet.GPU {
	return fleet.GPU{GPUKey: fleet.GPUKey{Node: "node-1", UUID: uuid}, Model: model, Sharing: sharing,
		ReportedHours: 168, AllocatedHours: 168, Steps: 10080, Coverage: 1, MemoryTotalBytes: mem, UtilizationSteps: 10080, ThrottleSteps: 10080}
}

func TestDetectKinds(t *testing.T) {
	busyGPU := gpu("GPU-1", h100, "none", 80*GiB)
	tests := []struct {
		name     string
		res      *fleet.Result
		kind     vocab.Kind
		severity Severity
		savings  func(float64) bool
		summary  string
	}{
		{"idle whole H100", result([]fleet.Allocation{alloc("jupyter", "GPU-1", h100, "none", "", 1, 0.004, 0.02, 2*GiB)}, []fleet.GPU{busyGPU}),
			vocab.KindIdleAllocation, Warning, positive, "team-a/jupyter held a whole H100-80GB for 168 h at 0.4% average use"},
		{"underused whole A100", result([]fleet.Allocation{alloc("embed", "GPU-1", a100, "none", "", 1, 0.2, 0.3, 10*GiB)}, []fleet.GPU{gpu("GPU-1", a100, "none", 80*GiB)}),
			vocab.KindUnderusedGPU, Warning, positive, "used 20% of a whole A100-80GB"},
		{"oversized MIG slice", result([]fleet.Allocation{alloc("ocr", "GPU-1", h100, "mig", "3g.40gb", 3.0/7, 0.2, 0.25, 5*GiB)}, []fleet.GPU{gpu("GPU-1", h100, "mig", 80*GiB)}),
			vocab.KindMIGOversized, Warning, positive, "request a 1g.10gb MIG slice"},
		{"undersized MIG slice", result([]fleet.Allocation{alloc("train", "GPU-1", h100, "mig", "2g.20gb", 2.0/7, 0.97, 0.99, 15*GiB)}, []fleet.GPU{gpu("GPU-1", h100, "mig", 80*GiB)}),
			vocab.KindMIGUndersized, Warning, negative, "too small for it"},
		{"training on a time-sliced GPU", result([]fleet.Allocation{alloc("train", "GPU-1", a100, "time-slicing", "", 0.25, 3.2, 3.6, 30*GiB)}, []fleet.GPU{gpu("GPU-1", a100, "time-slicing", 80*GiB)}),
			vocab.KindTrainingOnShared, Warning, negative, "a reliability fix, not a saving"},
		{"insufficient coverage", result([]fleet.Allocation{func() fleet.Allocation {
			a := alloc("short", "GPU-1", h100, "none", "", 1, 0.01, 0.01, GiB)
			a.Coverage, a.Steps, a.HeldHours = 0.1, 1008, 16.8
			return a
		}()}, []fleet.GPU{busyGPU}), vocab.KindInsufficientData, Info, zero, "too little to judge"},
		{"no utilization samples", result([]fleet.Allocation{func() fleet.Allocation {
			a := alloc("blind", "GPU-1", h100, "none", "", 1, 0, 0, GiB)
			a.UtilizationSteps, a.UtilizationCoverage = 0, 0
			return a
		}()}, []fleet.GPU{busyGPU}), vocab.KindInsufficientData, Info, zero, "unknown, not zero"},
		{"unallocated GPU", result(nil, []fleet.GPU{func() fleet.GPU {
			g := gpu("GPU-1", h100, "", 80*GiB)
			g.AllocatedHours, g.UnallocatedHours = 0, 168
			return g
		}()}), vocab.KindUnallocated, Warning, positive, "sat unallocated for 168 h (100%"},
		{"lost GPU", result(nil, []fleet.GPU{func() fleet.GPU {
			g := busyGPU
			g.XIDErrors, g.XIDCodes, g.DownSteps = 1, []string{"79"}, 120
			return g
		}()}), vocab.KindGPUErrors, Critical, zero, "had 1 XID error(s) (XID 79) and was lost for 2.0 h"},
		{"application XIDs", result(nil, []fleet.GPU{func() fleet.GPU {
			g := busyGPU
			g.WorkloadXIDErrors, g.WorkloadXIDCodes = 3, []string{"13", "43"}
			return g
		}()}), vocab.KindWorkloadXID, Info, zero, "3 application error(s) (XID 13, 43): a bug or a killed process in the workload, not a GPU fault"},
		{"thermal throttling", result(nil, []fleet.GPU{func() fleet.GPU {
			g := busyGPU
			g.ThermalThrottleRatio = 0.3
			return g
		}()}), vocab.KindThermal, Warning, zero, "for heat 30% of the time"},
		{"mixed models on a node", result(nil, []fleet.GPU{busyGPU, gpu("GPU-2", a100, "none", 80*GiB)}),
			vocab.KindMixedModels, Warning, zero, "has GPUs of 2 models"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Detect(tt.res, nil, criteria.DefaultConfig(), price.DefaultPrices())
			f := find(r, tt.kind)
			if f == nil {
				t.Fatalf("no %s finding in %+v", tt.kind, r.Findings)
			}
			if f.Severity != tt.severity || !tt.savings(f.MonthlySavingsUSD) || !strings.Contains(f.Summary, tt.summary) {
				t.Errorf("%s: severity %s, savings %v, summary %q; want %s and %q", tt.kind, f.Severity, f.MonthlySavingsUSD, f.Summary, tt.severity, tt.summary)
			}
			if f.Confidence <= 0 || f.Confidence > 1 || (f.Kind != vocab.KindMixedModels && !f.CostKnown) {
				t.Errorf("confidence %v, cost known %v", f.Confidence, f.CostKnown)
			}
		})
	}
}

func positive(v float64) bool { return v > 0 }
func negative(v float64) bool { return v < 0 }
func zero(v float64) bool     { return v == 0 }

func find(r *Result, kind vocab.Kind) *Finding {
	for i := range r.Findings {
		if r.Findings[i].Kind == kind {
			return &r.Findings[i]
		}
	}
	return nil
}

// TestHealthyFleet: well-used, well-sized workloads yield no findings
// above info.
func TestHealthyFleet(t *testing.T) {
	res := result([]fleet.Allocation{
		alloc("train", "GPU-1", h100, "none", "", 1, 0.9, 0.97, 70*GiB),
		alloc("serve", "GPU-2", h100, "mig", "1g.10gb", 1.0/7, 0.6, 0.7, 7*GiB),
		alloc("etl-a", "GPU-3", h100, "time-slicing", "", 0.5, 0.3, 0.4, 20*GiB),
		alloc("etl-b", "GPU-3", h100, "time-slicing", "", 0.5, 0.3, 0.4, 20*GiB),
	}, []fleet.GPU{gpu("GPU-1", h100, "none", 80*GiB), gpu("GPU-2", h100, "mig", 80*GiB), gpu("GPU-3", h100, "time-slicing", 80*GiB)})
	for _, f := range Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices()).Findings {
		if f.Severity != Info {
			t.Errorf("healthy fleet: %s %s: %s", f.Severity, f.Kind, f.Summary)
		}
	}
}

// TestOOMRisk: the verdict follows the memory in use at the same time
// (the device's, or else the tenants' summed per step), never the sum of
// the tenants' peaks.
func TestOOMRisk(t *testing.T) {
	tenants := func(mem ...float64) []fleet.Allocation {
		var out []fleet.Allocation
		for i, m := range mem {
			out = append(out, alloc(string(rune('a'+i)), "GPU-1", a100, "time-slicing", "", 0.25, 0.2, 0.3, m))
		}
		return out
	}
	// device is a GPU whose own memory figures are reported.
	device := func(p99, last, growthPerHour float64) fleet.GPU {
		g := gpu("GPU-1", a100, "time-slicing", 80*GiB)
		g.MemoryUsedP99Bytes, g.MemoryUsedPeakBytes, g.MemoryUsedLastBytes, g.MemoryUsedGrowthBytesPerHour, g.MemoryUsedSteps = p99, p99, last, growthPerHour, 10080
		return g
	}
	// concurrent is a GPU without its own figures: the tenants' per-step sum.
	concurrent := func(p99 float64) fleet.GPU {
		g := gpu("GPU-1", a100, "time-slicing", 80*GiB)
		g.TenantsMemoryP99Bytes = p99
		return g
	}
	tests := []struct {
		name   string
		schema string
		allocs []fleet.Allocation
		gpu    fleet.GPU
		want   Severity
	}{
		{"comfortable", "native", tenants(20*GiB, 20*GiB, 10*GiB), device(50*GiB, 50*GiB, 0), ""},
		{"90% of memory", "native", tenants(30*GiB, 30*GiB, 13*GiB), device(73*GiB, 73*GiB, 0), Warning},
		{"over memory", "native", tenants(40*GiB, 30*GiB, 20*GiB), device(80*GiB, 80*GiB, 0), Critical},
		// 50 GiB now, +0.25 GiB/h: 92 GiB after another week.
		{"device trend crosses 90%", "native", tenants(20*GiB, 20*GiB, 10*GiB), device(50*GiB, 50*GiB, 0.25*GiB), Warning},
		// Three nightly jobs of 30 GiB each, one at a time: their peaks
		// sum to 90 GiB, but 30 GiB was the most ever in use.
		{"tenants that take turns", "native", tenants(30*GiB, 30*GiB, 30*GiB), device(30*GiB, 0, 0), ""},
		{"tenants that take turns, no device series", "native", tenants(30*GiB, 30*GiB, 30*GiB), concurrent(30 * GiB), ""},
		{"tenants at once, no device series", "native", tenants(30*GiB, 30*GiB, 15*GiB), concurrent(75 * GiB), Warning},
		{"dcgm-exporter reports the device to every tenant", "dcgm-exporter", tenants(40*GiB, 40*GiB, 40*GiB), device(40*GiB, 40*GiB, 0), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := result(tt.allocs, []fleet.GPU{tt.gpu})
			res.Schema = tt.schema
			f := find(Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices()), vocab.KindTimesliceOOMRisk)
			switch {
			case tt.want == "" && f != nil:
				t.Errorf("unexpected %s: %s", f.Severity, f.Summary)
			case tt.want != "" && (f == nil || f.Severity != tt.want):
				t.Errorf("got %+v, want %s", f, tt.want)
			case f != nil && (f.Recommendation == nil || f.Recommendation.DevicePluginConfig == ""):
				t.Errorf("no relief: %+v", f.Recommendation)
			}
		})
	}
}

func TestUnknownPrice(t *testing.T) {
	res := result([]fleet.Allocation{alloc("x", "GPU-1", "NVIDIA RTX A6000", "none", "", 1, 0.01, 0.01, GiB)}, []fleet.GPU{gpu("GPU-1", "NVIDIA RTX A6000", "none", 48*GiB)})
	f := find(Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices()), vocab.KindIdleAllocation)
	if f == nil || f.CostKnown || f.MonthlyCostUSD != 0 || !strings.Contains(f.Summary, `no price for model "NVIDIA RTX A6000"`) {
		t.Errorf("unknown price: %+v", f)
	}
}

func TestInventoryKinds(t *testing.T) {
	res := result([]fleet.Allocation{alloc("jupyter", "GPU-1", h100, "none", "", 1, 0.004, 0.02, 2*GiB)}, []fleet.GPU{gpu("GPU-1", h100, "none", 80*GiB)})
	r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
	if len(r.Skipped) != 2 || !strings.HasPrefix(r.Skipped[0], "untainted-gpu-node: needs cluster access") {
		t.Errorf("skipped without inventory: %q", r.Skipped)
	}
	inv := &inventory.Inventory{Available: true,
		Nodes: map[string]inventory.Node{
			"node-1": {Name: "node-1", Product: h100, Count: 8},
			"node-2": {Name: "node-2", Product: h100, Count: 8, Taints: []inventory.Taint{{Key: "nvidia.com/gpu", Effect: "NoSchedule"}}},
			"cpu-1":  {Name: "cpu-1"},
		},
		Namespaces: map[string]inventory.Namespace{"team-a": {Name: "team-a", Team: "nlp"}},
		Pods: map[inventory.PodKey]inventory.Pod{
			{Namespace: "team-a", Name: "jupyter"}: {PodKey: inventory.PodKey{Namespace: "team-a", Name: "jupyter"}, Node: "node-1", Phase: "Running",
				WorkloadKind: "StatefulSet", WorkloadName: "alice-jupyter", GPURequests: map[vocab.Resource]int64{"nvidia.com/gpu": 1}},
			{Namespace: "web", Name: "nginx"}: {PodKey: inventory.PodKey{Namespace: "web", Name: "nginx"}, Node: "node-1", Phase: "Running", WorkloadKind: "Deployment", WorkloadName: "nginx"},
			{Namespace: "web", Name: "api"}:   {PodKey: inventory.PodKey{Namespace: "web", Name: "api"}, Node: "node-2", Phase: "Running", WorkloadKind: "Deployment", WorkloadName: "api"},
			{Namespace: "mon", Name: "dcgm"}:  {PodKey: inventory.PodKey{Namespace: "mon", Name: "dcgm"}, Node: "node-1", Phase: "Running", WorkloadKind: "DaemonSet", WorkloadName: "dcgm"},
		},
		Quotas: map[string][]inventory.Quota{},
	}
	r = Detect(res, inv, criteria.DefaultConfig(), price.DefaultPrices())
	var kinds []string
	for _, f := range r.Findings {
		kinds = append(kinds, string(f.Kind)+"@"+f.Node+f.Namespace)
	}
	want := []string{"untainted-gpu-node@node-1", "idle-allocation@node-1team-a", "namespace-without-gpu-quota@team-a"}
	slices.Sort(kinds)
	slices.Sort(want)
	if !slices.Equal(kinds, want) || len(r.Skipped) != 0 {
		t.Errorf("findings %q, skipped %q; want %q", kinds, r.Skipped, want)
	}
	idle := find(r, vocab.KindIdleAllocation)
	if idle.Workload != "alice-jupyter" || idle.WorkloadKind != "StatefulSet" || idle.Team != "nlp" ||
		idle.Recommendation.Patch.Target != "StatefulSet/team-a/alice-jupyter" {
		t.Errorf("idle finding not joined with inventory: %+v", idle)
	}
}

// TestOrdering: severity first, then larger savings, then keys.
func TestOrdering(t *testing.T) {
	fs := []Finding{
		{Kind: "b", Severity: Info},
		{Kind: "a", Severity: Warning, MonthlySavingsUSD: 10},
		{Kind: "z", Severity: Warning, MonthlySavingsUSD: 500},
		{Kind: "c", Severity: Critical},
		{Kind: "a", Severity: Warning, MonthlySavingsUSD: 10, Namespace: "a"},
	}
	sortFindings(fs)
	var got []string
	for _, f := range fs {
		got = append(got, string(f.Kind)+f.Namespace)
	}
	if want := []string{"c", "z", "a", "aa", "b"}; !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

// TestWorkloadSource: the API's owner wins, then kube-state-metrics' (for
// pods gone from the API), then the pod name's form.
func TestWorkloadSource(t *testing.T) {
	build := func() *fleet.Result {
		res := result([]fleet.Allocation{alloc("agent-b7r4w", "GPU-1", h100, "none", "", 1, 0.004, 0.02, 2*GiB)}, []fleet.GPU{gpu("GPU-1", h100, "none", 80*GiB)})
		// The engine reads <name>-<5 random> as a Job's pod.
		res.Workloads[0].Kind, res.Workloads[0].Name = "Job", "agent"
		return res
	}
	inv := &inventory.Inventory{Available: true, Namespaces: map[string]inventory.Namespace{}, Pods: map[inventory.PodKey]inventory.Pod{
		{Namespace: "team-a", Name: "agent-b7r4w"}: {WorkloadKind: "DaemonSet", WorkloadName: "gpu-agent"}}}
	for _, tt := range []struct {
		name       string
		inv        *inventory.Inventory
		ksm        map[fleet.PodRef]fleet.Owner
		kind, wl   string
		wantSource string
	}{
		{"pod name only", nil, nil, "Job", "agent", SourcePodName},
		{"kube-state-metrics", nil, map[fleet.PodRef]fleet.Owner{{Namespace: "team-a", Name: "agent-b7r4w"}: {Kind: "DaemonSet", Name: "agent"}}, "DaemonSet", "agent", SourceKubeStateMetrics},
		{"API over kube-state-metrics", inv, map[fleet.PodRef]fleet.Owner{{Namespace: "team-a", Name: "agent-b7r4w"}: {Kind: "DaemonSet", Name: "agent"}}, "DaemonSet", "gpu-agent", SourceAPI},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := build()
			res.PodOwners = tt.ksm
			r := Detect(res, tt.inv, criteria.DefaultConfig(), price.DefaultPrices())
			f := find(r, vocab.KindIdleAllocation)
			if f == nil || f.WorkloadKind != tt.kind || f.Workload != tt.wl || f.WorkloadSource != tt.wantSource || r.WorkloadSources[tt.wantSource] != 1 {
				t.Errorf("got %+v (sources %v), want %s/%s from %s", f, r.WorkloadSources, tt.kind, tt.wl, tt.wantSource)
			}
		})
	}
}

// TestOOMRiskWithoutProcessAttribution: without hostPID the exporter has
// no per-tenant memory, but the device's own figures still flag the GPU,
// at half confidence and saying why.
func TestOOMRiskWithoutProcessAttribution(t *testing.T) {
	a := alloc("svc-a", "GPU-1", a100, "time-slicing", "", 0.5, 0.2, 0.3, 0)
	b := alloc("svc-b", "GPU-1", a100, "time-slicing", "", 0.5, 0.2, 0.3, 0)
	a.MemorySteps, b.MemorySteps = 0, 0
	for _, tt := range []struct {
		used float64
		want Severity
	}{{76 * GiB, Warning}, {40 * GiB, ""}} {
		g := gpu("GPU-1", a100, "time-slicing", 80*GiB)
		g.MemoryUsedP99Bytes, g.MemoryUsedLastBytes, g.MemoryUsedSteps = tt.used, tt.used, 10080
		f := find(Detect(result([]fleet.Allocation{a, b}, []fleet.GPU{g}), nil, criteria.DefaultConfig(), price.DefaultPrices()), vocab.KindTimesliceOOMRisk)
		switch {
		case tt.want == "" && f != nil:
			t.Errorf("%.0f GiB used: unexpected %s", tt.used/GiB, f.Summary)
		case tt.want != "" && (f == nil || f.Severity != tt.want || f.Confidence > 0.5 || f.Evidence["tenant_memory_unknown"] != 1 ||
			!strings.Contains(f.Summary, "without hostPID")):
			t.Errorf("%.0f GiB used: got %+v, want a %s at half confidence", tt.used/GiB, f, tt.want)
		}
	}
}
