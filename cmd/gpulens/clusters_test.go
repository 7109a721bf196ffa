package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
)

// twoClusterStore writes the pipeline's fixture fleet twice into one
// TSDB, as clusters eu and us of a shared store: the same nodes,
// namespaces and pods in both.
func twoClusterStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var fs []*pipelinetest.Fixture
	for _, c := range []string{"eu", "us"} {
		f, err := pipelinetest.Read("../../analyzer/pipeline/testdata/fleet.yaml")
		if err != nil {
			t.Fatal(err)
		}
		f.Labels = map[string]string{"cluster": c}
		fs = append(fs, f)
	}
	if err := pipelinetest.WriteAll(dir, fs...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReportAndRecommendClusters: gpulens report and recommend over a
// store of two clusters, with --cluster-label's default: each cluster's
// summary is half the fleet's (the same fleet twice), and every team and
// finding names its cluster. With --cluster-label "" the same store is
// one cluster, whose same-named pods merge: the fleet is not doubled.
func TestReportAndRecommendClusters(t *testing.T) {
	dir := twoClusterStore(t)
	args := []string{"--data-dir", dir, "--since", "7d", "--until", "2026-03-16T00:00:00Z", "--no-kubernetes", "--quiet"}
	var stdout, stderr bytes.Buffer
	if code := execute(append([]string{"report", "-o", "json"}, args...), &stdout, &stderr); code != exitOK {
		t.Fatalf("report: exit %d: %s", code, stderr.String())
	}
	type figures struct {
		GPUs              int     `json:"gpus"`
		AllocatedGPUHours float64 `json:"allocated_gpu_hours"`
	}
	var r struct {
		Cluster  figures `json:"cluster"`
		Clusters []struct {
			Name string `json:"cluster"`
			figures
		} `json:"clusters"`
		Teams []struct {
			Cluster string `json:"cluster"`
			Team    string `json:"team"`
		} `json:"teams"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v\n%.300s", err, stdout.String())
	}
	// The fixture has 6 GPUs: 12 in the fleet, 6 in each cluster.
	if r.Cluster.GPUs != 12 || len(r.Clusters) != 2 {
		t.Fatalf("fleet of %d GPUs in %d clusters, want 12 in 2", r.Cluster.GPUs, len(r.Clusters))
	}
	for _, c := range r.Clusters {
		if c.GPUs != 6 || c.AllocatedGPUHours != r.Cluster.AllocatedGPUHours/2 {
			t.Errorf("cluster %s: %d GPUs, %v GPU-hours, want 6 and half of %v", c.Name, c.GPUs, c.AllocatedGPUHours, r.Cluster.AllocatedGPUHours)
		}
	}
	for _, tm := range r.Teams {
		if tm.Cluster != "eu" && tm.Cluster != "us" {
			t.Errorf("team %s names cluster %q", tm.Team, tm.Cluster)
		}
	}

	stdout.Reset()
	if code := execute(append([]string{"recommend", "-o", "json", "--all"}, args...), &stdout, &stderr); code != exitOK {
		t.Fatalf("recommend: exit %d: %s", code, stderr.String())
	}
	var fs []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &fs); err != nil {
		t.Fatal(err)
	}
	per := map[any]int{}
	for _, f := range fs {
		per[f["cluster"]]++
	}
	if len(fs) == 0 || per["eu"] != per["us"] || per["eu"]+per["us"] != len(fs) {
		t.Errorf("findings per cluster %v of %d, want every finding in eu or us, as many in each", per, len(fs))
	}

	stdout.Reset()
	if code := execute(append([]string{"report", "-o", "json", "--cluster-label", ""}, args...), &stdout, &stderr); code != exitOK {
		t.Fatalf("report --cluster-label '': exit %d: %s", code, stderr.String())
	}
	r.Clusters = nil
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Cluster.GPUs != 6 || r.Clusters != nil {
		t.Errorf("read as one cluster: %d GPUs, clusters %v; want the two clusters' same-named GPUs as 6, no clusters", r.Cluster.GPUs, r.Clusters)
	}
}

// TestClusterLabelIsALabelName: --cluster-label that no series could carry
// is a usage error naming the flag, before any query.
func TestClusterLabelIsALabelName(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := execute([]string{"report", "--data-dir", t.TempDir(), "--no-kubernetes", "--cluster-label", "k8s-cluster"}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), `--cluster-label: "k8s-cluster" is not a label name`) {
		t.Errorf("exit %d, stderr %q; want %d naming the flag", code, stderr.String(), exitUsage)
	}
}

// TestRecommendTableClusters: the recommend table has a cluster column
// over a store of several clusters, and the patches name the cluster
// whose context they are applied with.
func TestRecommendTableClusters(t *testing.T) {
	dir := twoClusterStore(t)
	args := []string{"recommend", "--data-dir", dir, "--since", "7d", "--until", "2026-03-16T00:00:00Z", "--no-kubernetes", "--quiet"}
	var stdout, stderr bytes.Buffer
	if code := execute(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.HasPrefix(out, "CLUSTER  SEVERITY") || !strings.Contains(out, "\neu ") || !strings.Contains(out, "\nus ") {
		t.Errorf("the table has no cluster column naming eu and us:\n%s", out)
	}
	stdout.Reset()
	if code := execute(append(args, "-o", "yaml"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "# cluster: eu\n") || !strings.Contains(out, "# cluster: us\n") {
		t.Errorf("the patches do not name their clusters:\n%.600s", out)
	}
}
