package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/internal/testenv"
)

// TestScenarioMistakes: a scenario with errors must stop the exporter with
// the configuration exit code and name the file, line and field of each.
func TestScenarioMistakes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broken.yaml")
	os.WriteFile(path, []byte(`seed: 1
nodes:
  - name: n1
    system: dgxh100
    pods:
      - namespace: a
        name: p
        gpu: 12
        load: trainig
        utilization: 0.5
        memory: 1GiB
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exporterBin, "--backend=sim", "--sim.scenario="+path,
		"--web.listen-address="+testenv.FreeAddr(t)).CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitConfig {
		t.Fatalf("exit %v, want %d\n%s", err, exitConfig, out)
	}
	for _, want := range []string{"broken.yaml:8", "nodes[0].pods[0].gpu", "broken.yaml:9", "trainig"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("error output lacks %q:\n%s", want, out)
		}
	}
}

// TestLostAndHungGPU: one GPU lost and one hanging from the start; the
// others are reported, the two are up 0, and the exporter stays healthy.
func TestLostAndHungGPU(t *testing.T) {
	path := filepath.Join(t.TempDir(), "faults.yaml")
	os.WriteFile(path, []byte(`seed: 7
nodes:
  - name: n1
    system: dgxh100
    faults:
      - {gpu: 2, kind: lost, at: 0s}
      - {gpu: 5, kind: hang, at: 0s}
`), 0o644)
	p := startExporter(t, nil, "http", "--backend=sim", "--sim.scenario="+path, "--collect.interval=1h",
		"--collect.timeout=300ms")
	waitHealthy(t, p)
	_, body := get(t, "http://"+p.addr+"/metrics")
	up := map[string]string{}
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "gpulens_gpu_up{") {
			gpu := line[strings.Index(line, `gpu="`)+5:]
			gpu = gpu[:strings.IndexByte(gpu, '"')]
			up[gpu] = strings.TrimSpace(line[strings.LastIndexByte(line, ' '):])
		}
	}
	if len(up) != 8 {
		t.Fatalf("%d GPUs reported, want 8:\n%v", len(up), up)
	}
	for gpu, v := range up {
		want := "1"
		if gpu == "2" || gpu == "5" {
			want = "0"
		}
		if v != want {
			t.Errorf("gpu %s up=%s, want %s", gpu, v, want)
		}
	}
	if code, body := get(t, "http://"+p.addr+"/healthz"); code != 200 {
		t.Errorf("a lost GPU made the exporter unhealthy: %d %s", code, body)
	}
}
