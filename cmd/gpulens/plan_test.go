package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func planArgs(dir string, extra ...string) []string {
	return append([]string{"plan", "--data-dir", dir, "--since", "6h", "--until", "2026-01-05T14:00:00Z", "--no-kubernetes"}, extra...)
}

func TestPlanOutputs(t *testing.T) {
	dir := demoTSDB(t)

	var stdout, stderr bytes.Buffer
	if code := execute(planArgs(dir, "-o", "json"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var p struct {
		GPUsToday  int `json:"gpus_today"`
		GPUsNeeded int `json:"gpus_needed"`
		Pools      []struct {
			Model       string `json:"model"`
			GPUsToday   int    `json:"gpus_today"`
			GPUsNeeded  int    `json:"gpus_needed"`
			Assignments []struct {
				Lane     string `json:"lane"`
				Resource string `json:"resource"`
			} `json:"assignments"`
			Replay struct {
				Steps              int `json:"steps"`
				OvercommittedSteps int `json:"overcommitted_steps"`
			} `json:"replay"`
		} `json:"pools"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &p); err != nil {
		t.Fatalf("%v:\n%s", err, stdout.String())
	}
	// The demo fleet: 4 nodes of 8 GPUs, a DRA node of 4 H100s and a
	// HAMi node of 2 A100 40GBs, every GPU reporting, in 5 pools (the DRA
	// node's H100s join the H100 pool, the A100 40GBs are a pool).
	if p.GPUsToday != 4*8+4+2 || len(p.Pools) != 5 {
		t.Errorf("%d GPUs in %d pools, want 38 in 5", p.GPUsToday, len(p.Pools))
	}
	for _, pool := range p.Pools {
		// Six hours at the demo's two-minute step, planned at one minute:
		// the lookback fills the steps between samples.
		if pool.Replay.Steps != 360 || pool.Replay.OvercommittedSteps != 0 {
			t.Errorf("%s: replay of %d steps, %d overcommitted; want 360 and 0", pool.Model, pool.Replay.Steps, pool.Replay.OvercommittedSteps)
		}
		for _, a := range pool.Assignments {
			if !strings.HasPrefix(a.Resource, "nvidia.com/") {
				t.Errorf("%s: resource %q", a.Lane, a.Resource)
			}
		}
	}

	// -o writes the file, and nothing to standard output.
	file := filepath.Join(t.TempDir(), "plan.json")
	stdout.Reset()
	if code := execute(planArgs(dir, "-o", "json", "--output-file", file), &stdout, &stderr); code != exitOK || stdout.Len() != 0 {
		t.Fatalf("-o: exit %d, stdout %q: %s", code, stdout.String(), stderr.String())
	}
	if data, err := os.ReadFile(file); err != nil || !json.Valid(data) {
		t.Errorf("-o wrote %d bytes (%v), want the JSON plan", len(data), err)
	}

	stdout.Reset()
	if code := execute(planArgs(dir), &stdout, &stderr); code != exitOK {
		t.Fatalf("table: exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"MODEL", "GPUS TODAY", "Replay:", "0 overcommitted memory steps", "Where each workload goes"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("table has no %q:\n%s", want, stdout.String())
		}
	}

	stdout.Reset()
	if code := execute(planArgs(dir, "-o", "yaml"), &stdout, &stderr); code != exitOK {
		t.Fatalf("yaml: exit %d: %s", code, stderr.String())
	}
	dec := yaml.NewDecoder(strings.NewReader(stdout.String()))
	docs, patches := 0, 0
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("document %d: %v", docs, err)
			}
			break
		}
		docs++
		if _, ok := doc["spec"]; ok {
			patches++
		}
	}
	if patches == 0 || docs <= patches {
		t.Errorf("%d documents, %d patches: want node group configs and patches", docs, patches)
	}
}

func TestPlanBadInput(t *testing.T) {
	dir := demoTSDB(t)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"empty window", []string{"plan", "--data-dir", dir, "--since", "6h", "--until", "2025-01-05T14:00:00Z", "--no-kubernetes"}, exitNoData, "no GPU series to plan from: no GPU metrics in"},
		{"unknown model", planArgs(dir, "--model", "V100"), exitUsage, `no GPUs of model "V100" in the window (models there: `},
		{"unknown format", planArgs(dir, "-o", "csv"), exitUsage, `unknown output format "csv"`},
		{"bad step", planArgs(dir, "--step", "0s"), exitUsage, "--step"},
		{"bad replicas", planArgs(dir, "--max-replicas", "1"), exitUsage, "--max-replicas"},
		{"no source", []string{"plan"}, exitUsage, "no metrics source"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := execute(c.args, &stdout, &stderr)
			if code != c.code || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want exit %d with %q", code, stderr.String(), c.code, c.want)
			}
			if stdout.Len() != 0 {
				t.Errorf("a plan was printed: %s", stdout.String())
			}
		})
	}
}

func TestPlanHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"plan", "--help"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Usage:", "Examples:", "-o, --output string", "--output-file string", "--data-dir", "--prometheus-url", "replay"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help has no %q", want)
		}
	}
}

// TestPlanClusters: a store of two clusters is planned cluster by
// cluster: the table has a cluster column and names each pool's cluster,
// and the JSON each pool's.
func TestPlanClusters(t *testing.T) {
	dir := twoClusterStore(t)
	args := []string{"plan", "--data-dir", dir, "--since", "6h", "--until", "2026-03-16T00:00:00Z", "--no-kubernetes"}
	var stdout, stderr bytes.Buffer
	if code := execute(append(args, "-o", "table"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	table := stdout.String()
	for _, want := range []string{"CLUSTER  MODEL", "of cluster eu:", "of cluster us:", "(clusters eu, us)"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	stdout.Reset()
	if code := execute(append(args, "-o", "json"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var p struct {
		Clusters  []string `json:"clusters"`
		GPUsToday int      `json:"gpus_today"`
		Pools     []struct {
			Cluster   string `json:"cluster"`
			GPUsToday int    `json:"gpus_today"`
		} `json:"pools"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, pp := range p.Pools {
		per[pp.Cluster] += pp.GPUsToday
	}
	// The fixture's six GPUs in each cluster.
	if strings.Join(p.Clusters, ",") != "eu,us" || p.GPUsToday != 12 || per["eu"] != 6 || per["us"] != 6 {
		t.Errorf("clusters %q, %d GPUs today, per cluster %v; want eu and us of 6 each", p.Clusters, p.GPUsToday, per)
	}
}
