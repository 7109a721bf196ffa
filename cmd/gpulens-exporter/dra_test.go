package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestEndToEndGoldenMetricsDRA serves the default scenario's DRA node
// (gpu-h100-dra-01): its GPUs reach containers through ResourceClaims that
// the simulated kubelet lists, resolved through the ResourceSlice the
// simulated API server publishes, in time for the first collection.
func TestEndToEndGoldenMetricsDRA(t *testing.T) {
	p := startExporter(t, nil, "http", append(simArgs, "--sim.node=gpu-h100-dra-01")...)
	waitHealthy(t, p)
	code, body := get(t, "http://"+p.addr+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	// The scenario: four pods on four claims' devices; embed-serving-a and
	// -b share one claim, so their GPU, half each.
	for _, want := range []string{
		`gpulens_container_gpu_claim_info{claim="embed-shared-gpu",claim_namespace="team-recsys",container="main",device="gpu-1",driver="gpu.nvidia.com",gpu="1",gpu_instance="",namespace="team-recsys",node="gpu-h100-dra-01",pod="embed-serving-a",pool="gpu-h100-dra-01",`,
		`gpulens_container_gpu_claim_info{claim="embed-shared-gpu",claim_namespace="team-recsys",container="main",device="gpu-1",driver="gpu.nvidia.com",gpu="1",gpu_instance="",namespace="team-recsys",node="gpu-h100-dra-01",pod="embed-serving-b",pool="gpu-h100-dra-01",`,
		`gpulens_container_gpu_claim_info{claim="llm-sft-0-gpu",claim_namespace="team-nlp",container="main",device="gpu-0",`,
		`gpulens_container_gpu_claim_info{claim="peggy-jupyter-gpu",claim_namespace="research-notebooks",container="notebook",device="gpu-2",`,
		`,namespace="team-recsys",node="gpu-h100-dra-01",pod="embed-serving-a",sharing="time-slicing",`,
		`,namespace="team-nlp",node="gpu-h100-dra-01",pod="llm-sft-0",sharing="none",`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("missing %s", want)
		}
	}
	if n := strings.Count(body, "\ngpulens_container_gpu_claim_info{"); n != 4 {
		t.Errorf("%d claim_info series, want 4", n)
	}
	golden(t, "metrics-dra.golden.prom", stable(body))

	// The Makefile's lint checks metrics.golden.prom, which has no claims.
	cmd := exec.Command(testenv.LookPath(t, "promtool"), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}
