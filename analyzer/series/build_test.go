package series

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/rollup"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/vocab"
)

func ptr(v float64) *float64 { return &v }

func fixture() Input {
	return Input{
		Findings: []findings.Finding{
			{Kind: vocab.KindIdleAllocation, Severity: findings.Warning, Namespace: "team-a", Workload: "nb", Pod: "nb-1",
				Node: "n1", GPUUUID: "GPU-1", Summary: "team-a/nb-1 idle", MonthlyCostUSD: 2000, MonthlySavingsUSD: 2000, CostKnown: true},
			{Kind: vocab.KindIdleAllocation, Severity: findings.Warning, Namespace: "team-a", Workload: "nb", Pod: "nb-2",
				Node: "n1", GPUUUID: "GPU-1", Summary: "team-a/nb-2 idle", MonthlyCostUSD: 1000, MonthlySavingsUSD: 500, CostKnown: true},
			{Kind: vocab.KindTimesliceOOMRisk, Severity: findings.Critical, Namespace: "team-b", Workload: `we"ird\name`,
				Node: "n2", GPUUUID: "GPU-2", Summary: "memory at \"94%\"\nof the GPU"},
		},
		Teams: []rollup.Team{
			{Team: "ml", Hours: rollup.Hours{AllocatedGPUHours: 168, UsedGPUHours: 84, IdleGPUHours: 60, Cost: 168, CostKnown: true, Efficiency: ptr(0.5)}},
			{Team: "équipe", Hours: rollup.Hours{AllocatedGPUHours: 24, Cost: 336, CostKnown: true}},
		},
		CostKnown:   true,
		WindowHours: 168,
	}
}

func TestBuild(t *testing.T) {
	noCost := fixture()
	noCost.CostKnown = false
	noCost.Findings = noCost.Findings[2:]
	tests := []struct {
		name string
		in   Input
		want []string
	}{
		{name: "findings and teams", in: fixture(), want: []string{
			`gpulens_analysis_window_seconds 604800`,
			`gpulens_finding{kind="idle-allocation",severity="warning",namespace="team-a",workload="nb",node="n1",gpu_uuid="GPU-1"} 1`,
			`gpulens_finding{kind="timeslice-oom-risk",severity="critical",namespace="team-b",workload="we\"ird\\name",node="n2",gpu_uuid="GPU-2"} 1`,
			// One summary per identity, the first pod's, saying how many
			// more share it; escaped as label values are.
			`gpulens_finding_info{kind="idle-allocation",severity="warning",namespace="team-a",workload="nb",node="n1",gpu_uuid="GPU-1",summary="team-a/nb-1 idle (and 1 more of this workload's pods)"} 1`,
			`gpulens_finding_info{kind="timeslice-oom-risk",severity="critical",namespace="team-b",workload="we\"ird\\name",node="n2",gpu_uuid="GPU-2",summary="memory at \"94%\"\nof the GPU"} 1`,
			`gpulens_finding_monthly_cost_usd{kind="idle-allocation",severity="warning",namespace="team-a",workload="nb",node="n1",gpu_uuid="GPU-1"} 3000`,
			`gpulens_finding_monthly_savings_usd{kind="idle-allocation",severity="warning",namespace="team-a",workload="nb",node="n1",gpu_uuid="GPU-1"} 2500`,
			`gpulens_team_efficiency_ratio{team="ml"} 0.5`,
			`gpulens_team_gpu_seconds{team="ml",state="allocated"} 604800`,
			`gpulens_team_gpu_seconds{team="ml",state="idle"} 216000`,
			`gpulens_team_gpu_seconds{team="ml",state="used"} 302400`,
			`gpulens_team_gpu_seconds{team="équipe",state="allocated"} 86400`,
			`gpulens_team_gpu_seconds{team="équipe",state="idle"} 0`,
			`gpulens_team_gpu_seconds{team="équipe",state="used"} 0`,
			`gpulens_team_monthly_cost_usd{team="ml"} 730`,
			`gpulens_team_monthly_cost_usd{team="équipe"} 1460`,
		}},
		{name: "no prices: no dollars", in: noCost, want: []string{
			`gpulens_analysis_window_seconds 604800`,
			`gpulens_finding{kind="timeslice-oom-risk",severity="critical",namespace="team-b",workload="we\"ird\\name",node="n2",gpu_uuid="GPU-2"} 1`,
			`gpulens_finding_info{kind="timeslice-oom-risk",severity="critical",namespace="team-b",workload="we\"ird\\name",node="n2",gpu_uuid="GPU-2",summary="memory at \"94%\"\nof the GPU"} 1`,
			`gpulens_team_efficiency_ratio{team="ml"} 0.5`,
			`gpulens_team_gpu_seconds{team="ml",state="allocated"} 604800`,
			`gpulens_team_gpu_seconds{team="ml",state="idle"} 216000`,
			`gpulens_team_gpu_seconds{team="ml",state="used"} 302400`,
			`gpulens_team_gpu_seconds{team="équipe",state="allocated"} 86400`,
			`gpulens_team_gpu_seconds{team="équipe",state="idle"} 0`,
			`gpulens_team_gpu_seconds{team="équipe",state="used"} 0`,
		}},
		{name: "one workload in two clusters: two series", in: func() Input {
			eu, us := fixture().Findings[2], fixture().Findings[2]
			eu.Cluster, us.Cluster = "eu", "us"
			ml := fixture().Teams[0]
			mlEU, mlUS := ml, ml
			mlEU.Cluster, mlUS.Cluster = "eu", "us"
			mlUS.AllocatedGPUHours = 24
			return Input{Findings: []findings.Finding{eu, us}, Teams: []rollup.Team{mlEU, mlUS}}
		}(), want: []string{
			`gpulens_team_efficiency_ratio{cluster="eu",team="ml"} 0.5`,
			`gpulens_team_efficiency_ratio{cluster="us",team="ml"} 0.5`,
			`gpulens_team_gpu_seconds{cluster="eu",team="ml",state="allocated"} 604800`,
			`gpulens_team_gpu_seconds{cluster="eu",team="ml",state="idle"} 216000`,
			`gpulens_team_gpu_seconds{cluster="eu",team="ml",state="used"} 302400`,
			`gpulens_team_gpu_seconds{cluster="us",team="ml",state="allocated"} 86400`,
			`gpulens_team_gpu_seconds{cluster="us",team="ml",state="idle"} 216000`,
			`gpulens_team_gpu_seconds{cluster="us",team="ml",state="used"} 302400`,
			`gpulens_finding{cluster="eu",kind="timeslice-oom-risk",severity="critical",namespace="team-b",workload="we\"ird\\name",node="n2",gpu_uuid="GPU-2"} 1`,
			`gpulens_finding{cluster="us",kind="timeslice-oom-risk",severity="critical",namespace="team-b",workload="we\"ird\\name",node="n2",gpu_uuid="GPU-2"} 1`,
			`gpulens_finding_info{cluster="eu",kind="timeslice-oom-risk",severity="critical",namespace="team-b",workload="we\"ird\\name",node="n2",gpu_uuid="GPU-2",summary="memory at \"94%\"\nof the GPU"} 1`,
			`gpulens_finding_info{cluster="us",kind="timeslice-oom-risk",severity="critical",namespace="team-b",workload="we\"ird\\name",node="n2",gpu_uuid="GPU-2",summary="memory at \"94%\"\nof the GPU"} 1`,
		}},
		{name: "nothing found", in: Input{}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			Build(tt.in).WritePrometheus(&b)
			var got []string
			for l := range strings.Lines(b.String()) {
				got = append(got, strings.TrimSuffix(l, "\n"))
			}
			slices.Sort(got)
			slices.Sort(tt.want)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestPromtoolCheckMetrics(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	var b strings.Builder
	if err := Write(&b, Build(fixture())); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(t.TempDir()+"/m.prom", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(b.String())
	out, _ := cmd.CombinedOutput()
	for l := range strings.Lines(string(out)) {
		if l = strings.TrimSpace(l); l != "" {
			t.Errorf("promtool check metrics: %s", l)
		}
	}
	if t.Failed() {
		t.Logf("exposition:\n%s", b.String())
	}
}

func TestEveryFamilyHasMetadata(t *testing.T) {
	var b strings.Builder
	Build(fixture()).WritePrometheus(&b)
	for l := range strings.Lines(b.String()) {
		fam := l[:strings.IndexAny(l, "{ ")]
		if _, ok := families[fam]; !ok {
			t.Errorf("%s is not in Families", fam)
		}
	}
}
