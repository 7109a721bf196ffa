package recommend

import (
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/price"

	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

const (
	h100 = "NVIDIA H100 80GB HBM3"
	l4   = "NVIDIA L4"
	a30  = "NVIDIA A30"
	gibF = 1 << 30
)

var web = workload.Ref{Kind: "Deployment", Namespace: "team-a", Name: "web", Container: "main"}

func TestRightSize(t *testing.T) {
	tests := []struct {
		name   string
		u      Usage
		policy func(*criteria.Policy)
		action Action
		to     string
		share  float64
	}{
		{"idle whole H100 to the smallest slice",
			Usage{Workload: web, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: 2 * gibF},
			nil, ActionMIGProfile, "nvidia.com/mig-1g.10gb", 1.0 / 7},
		{"memory 12 GiB × 1.2 needs the 20 GB slice",
			Usage{Workload: web, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.05, P99MemoryBytes: 12 * gibF},
			nil, ActionMIGProfile, "nvidia.com/mig-1g.20gb", 1.0 / 7},
		{"under memory shares 1g.20gb costs more than 2g.20gb? no: equal eighths, fewer sevenths wins",
			Usage{Workload: web, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.05, P99MemoryBytes: 12 * gibF},
			func(p *criteria.Policy) { p.MIGShare = criteria.ShareMemory }, ActionMIGProfile, "nvidia.com/mig-1g.20gb", 2.0 / 8},
		{"p95 load 30% of the GPU needs 3 sevenths at 80%",
			Usage{Workload: web, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.3, P99MemoryBytes: 5 * gibF},
			nil, ActionMIGProfile, "nvidia.com/mig-3g.40gb", 3.0 / 7},
		{"a 3g slice used at 20% fits 1g",
			Usage{Workload: web, Model: h100, Sharing: "mig", MIGProfile: "3g.40gb", Share: 3.0 / 7, P95Utilization: 0.2, P99MemoryBytes: 6 * gibF},
			nil, ActionMIGProfile, "nvidia.com/mig-1g.10gb", 1.0 / 7},
		{"a busy whole GPU stays",
			Usage{Workload: web, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.9, P99MemoryBytes: 70 * gibF},
			nil, "", "", 0},
		{"a slice already the smallest fit stays",
			Usage{Workload: web, Model: h100, Sharing: "mig", MIGProfile: "1g.10gb", Share: 1.0 / 7, P95Utilization: 0.5, P99MemoryBytes: 5 * gibF},
			nil, "", "", 0},
		{"an L4 at 15% with 4 GiB goes 4-way",
			Usage{Workload: web, Model: l4, Sharing: "none", Share: 1, P95Utilization: 0.15, P99MemoryBytes: 4 * gibF},
			nil, ActionTimeSlicing, "nvidia.com/gpu.shared", 0.25},
		{"max replicas caps the split",
			Usage{Workload: web, Model: l4, Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: 1 * gibF},
			func(p *criteria.Policy) { p.MaxReplicas = 2 }, ActionTimeSlicing, "nvidia.com/gpu.shared", 0.5},
		{"an L4 tenant already at 1/4 with 4 GiB stays",
			Usage{Workload: web, Model: l4, Sharing: "time-slicing", Share: 0.25, P95Utilization: 0.15, P99MemoryBytes: 4 * gibF},
			nil, "", "", 0},
		{"unknown model: nothing",
			Usage{Workload: web, Model: "NVIDIA RTX A6000", Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: gibF},
			nil, "", "", 0},
		// A30 has 4 compute slices: a 2g.12gb slice is half the GPU, and
		// 20% of it is 10% of the GPU, within 80% of a 1g's quarter; 3 GiB
		// with 20% margin fits 6 GB.
		{"an A30 2g.12gb slice used at 20% fits 1g.6gb",
			Usage{Workload: web, Model: a30, Sharing: "mig", MIGProfile: "2g.12gb", Share: 0.5, P95Utilization: 0.2, P99MemoryBytes: 3 * gibF},
			nil, ActionMIGProfile, "nvidia.com/mig-1g.6gb", 0.25},
		// 35% of the GPU fits 80% of two quarters; 8 GiB × 1.2 = 10.3 GB
		// fits 12 GB.
		{"a whole A30 at 35% goes to 2g.12gb",
			Usage{Workload: web, Model: a30, Sharing: "none", Share: 1, P95Utilization: 0.35, P99MemoryBytes: 8 * gibF},
			nil, ActionMIGProfile, "nvidia.com/mig-2g.12gb", 0.5},
		{"a MIG slice of a model without known geometry: no time-slicing advice",
			Usage{Workload: web, Model: "NVIDIA GH200 144G HBM3e", Sharing: "mig", MIGProfile: "1g.18gb", Share: 1.0 / 7,
				P95Utilization: 0.01, P99MemoryBytes: gibF, DeviceMemoryBytes: 144 * gibF},
			nil, "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := criteria.DefaultPolicy()
			if tt.policy != nil {
				tt.policy(&p)
			}
			r := RightSize(tt.u, p)
			if tt.action == "" {
				if r != nil {
					t.Fatalf("got %+v, want none", r)
				}
				return
			}
			if r == nil {
				t.Fatal("got none")
			}
			if r.Action != tt.action || r.To != tt.to || r.RecommendedShare != tt.share || r.Reliability {
				t.Errorf("got %s to %s at %v (reliability %v), want %s to %s at %v", r.Action, r.To, r.RecommendedShare, r.Reliability, tt.action, tt.to, tt.share)
			}
			if r.Patch == nil || !strings.Contains(r.Patch.YAML, tt.to+": 1") {
				t.Errorf("patch lacks %s: %+v", tt.to, r.Patch)
			}
		})
	}
}

func TestPatchForDeployment(t *testing.T) {
	u := Usage{Workload: web, Model: h100, Sharing: "none", Share: 1, P95Utilization: 0.01, P99MemoryBytes: gibF}
	r := RightSize(u, criteria.DefaultPolicy())
	want := `spec:
    template:
        spec:
            containers:
                - name: main
                  resources:
                    limits:
                        nvidia.com/gpu: null
                        nvidia.com/mig-1g.10gb: 1
                    requests:
                        nvidia.com/gpu: null
`
	if r.Patch.YAML != want || r.Patch.Target != "Deployment/team-a/web" {
		t.Errorf("patch for %s:\n%s\nwant\n%s", r.Patch.Target, r.Patch.YAML, want)
	}
	wantJSON := `{"spec":{"template":{"spec":{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":null,"nvidia.com/mig-1g.10gb":1},"requests":{"nvidia.com/gpu":null}}}]}}}}`
	if r.Patch.JSON != wantJSON {
		t.Errorf("JSON patch %s, want %s", r.Patch.JSON, wantJSON)
	}
	cron := BuildPatch(workload.Ref{Kind: "CronJob", Namespace: "n", Name: "c", Container: "main"}, PatchChange{Limits: map[vocab.Resource]int64{"nvidia.com/gpu": 1}})
	if !strings.HasPrefix(cron.JSON, `{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"main"`) {
		t.Errorf("CronJob patch %s", cron.JSON)
	}
}

func TestReliabilityRules(t *testing.T) {
	p := criteria.DefaultPolicy()
	shared := Usage{Workload: web, Model: "NVIDIA A100-SXM4-80GB", Sharing: "time-slicing", Share: 0.25, P95Utilization: 0.9, P99MemoryBytes: 30 * gibF,
		Resources: map[vocab.Resource]int64{"nvidia.com/gpu.shared": 1, "cpu": 4}}
	d := Dedicated(shared, p, "training-like load")
	if d.Action != ActionDedicatedGPU || !d.Reliability || d.RecommendedShare != 1 || d.From != "nvidia.com/gpu.shared" ||
		!strings.Contains(d.Patch.YAML, "nvidia.com/gpu.shared: null") || price.MonthlySavings(d.CurrentShare, d.RecommendedShare, 3.43) >= 0 {
		t.Errorf("dedicated: %+v", d)
	}

	small := Usage{Workload: web, Model: h100, Sharing: "mig", MIGProfile: "2g.20gb", Share: 2.0 / 7, P95Utilization: 0.99, P99MemoryBytes: 18 * gibF}
	if up := Upsize(small, p); up == nil || up.To != "nvidia.com/mig-3g.40gb" || !up.Reliability {
		t.Errorf("upsize 2g.20gb at 99%%: %+v", up)
	}

	leak := Tenant{Usage: Usage{Workload: web, Model: "NVIDIA A100-SXM4-80GB", Sharing: "time-slicing", Share: 0.25, P99MemoryBytes: 20 * gibF},
		ProjectedMemoryBytes: 30 * gibF}
	// 30 GiB projected × 1.2 margin = 36 GiB: two replicas of the 80 GiB
	// GPU fit it. Under the config of 2 replicas the output writes, the
	// patched request (nvidia.com/gpu.shared, renameByDefault) is one of
	// them, half the GPU: the advice says so and is priced so, not as the
	// dedicated GPU it said before (its patch and summary disagreed).
	r := RelieveOOM("time-slicing", 4, 80*gibF, leak, p)
	if r.Action != ActionTimeSlicing || r.RecommendedShare != 0.5 || !r.Reliability || r.To != "nvidia.com/gpu.shared" ||
		!strings.Contains(r.Summary, "from 4 to 2") || !strings.Contains(r.DevicePluginConfig, "replicas: 2") ||
		!strings.Contains(r.DevicePluginConfig, "timeSlicing") || !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.Contains(n, "dedicated GPU") }) {
		t.Errorf("time-slicing OOM relief: %+v", r)
	}
	// Where only one replica leaves room, the config's single replica is
	// the whole GPU: a dedicated GPU, as said.
	big := leak
	big.ProjectedMemoryBytes = 60 * gibF
	if r := RelieveOOM("time-slicing", 4, 80*gibF, big, p); r.Action != ActionDedicatedGPU || r.RecommendedShare != 1 || !strings.Contains(r.DevicePluginConfig, "replicas: 1") {
		t.Errorf("time-slicing OOM relief to one replica: %+v", r)
	}
	r = RelieveOOM("mps", 4, 80*gibF, leak, p)
	if r.Action != ActionMPSMemoryLimit || !strings.Contains(r.Patch.YAML, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") ||
		!strings.Contains(r.Patch.YAML, "0=36864M") || !strings.Contains(r.DevicePluginConfig, "mps:") {
		t.Errorf("MPS OOM relief: %+v\n%s", r, r.Patch.YAML)
	}
}

func TestPolicyValidate(t *testing.T) {
	for _, bad := range []func(*criteria.Policy){
		func(p *criteria.Policy) { p.MemoryMargin = -0.1 },
		func(p *criteria.Policy) { p.ComputeTarget = 0 },
		func(p *criteria.Policy) { p.MaxReplicas = 1 },
		func(p *criteria.Policy) { p.MIGShare = "sms" },
	} {
		p := criteria.DefaultPolicy()
		bad(&p)
		if p.Validate() == nil {
			t.Errorf("%+v validated", p)
		}
	}
	if err := criteria.DefaultPolicy().Validate(); err != nil {
		t.Error(err)
	}
}

func TestUnsizable(t *testing.T) {
	tests := []struct {
		u    Usage
		want string
	}{
		{Usage{Model: "NVIDIA GH200 144G HBM3e", Sharing: "mig", MIGProfile: "1g.18gb"}, "the MIG geometry of NVIDIA GH200 144G HBM3e is not in the catalog"},
		{Usage{Model: a30, Sharing: "mig", MIGProfile: "3g.40gb"}, "3g.40gb is not a MIG profile of A30"},
		{Usage{Model: a30, Sharing: "mig", MIGProfile: "2g.12gb"}, ""},
		{Usage{Model: "NVIDIA RTX A6000", Sharing: "none"}, ""},
	}
	for _, tt := range tests {
		got := Unsizable(tt.u)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("Unsizable(%s %s %s) = %q, want %q", tt.u.Model, tt.u.Sharing, tt.u.MIGProfile, got, tt.want)
		}
	}
}
