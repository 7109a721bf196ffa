package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/session"
)

// TestQuotaCommand: a bad format is a usage error.
func TestQuotaCommand(t *testing.T) {
	dir := demoTSDB(t)
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"quota", "--data-dir", dir, "-o", "pdf"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "-o:") {
		t.Errorf("bad format: exit %d, %q", code, stderr.String())
	}
}

// TestQuotaFromStore: without cluster access, `quota` advises the quotas
// the store's series hold, as the demo writes them the way
// kube-state-metrics (kube_resourcequota: namespace, resourcequota,
// resource, type "hard"/"used"; docs/metrics/policy/resourcequota-metrics.md)
// and Kueue (kueue_cluster_queue_nominal_quota and
// kueue_cluster_queue_borrowing_limit by cohort, cluster_queue, flavor,
// resource; kueue_local_queue_resource_usage by name, namespace, flavor,
// resource; pkg/metrics/metrics.go) export them: a row per team's
// ResourceQuota and one for the ClusterQueue, each with the demo's
// configured quota, and the source said in the notes and on stderr. At
// main the same command exited 6: no quota without a cluster.
func TestQuotaFromStore(t *testing.T) {
	dir := demoTSDB(t)
	var stdout, stderr bytes.Buffer
	if code := execute(quotaArgsFor(dir, "--step", "2m", "-o", "json"), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		Quotas []struct {
			Kind, Name, Namespace, Flavor, Resource string
			Namespaces                              []string
			Quota                                   float64
			Borrowing                               *float64 `json:"borrowing_limit"`
			Patch                                   string
		}
		Notes []string
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v:\n%s", err, stdout.String())
	}
	// The demo's configuration (analyzer/demo/quotas.go): a gpu-quota
	// ResourceQuota of requests.nvidia.com/gpu per team namespace, and the
	// ClusterQueue training (nominal 20, no borrowing limit) of team-nlp's
	// and team-vision's LocalQueues.
	want := map[string]float64{
		"ResourceQuota team-nlp/gpu-quota":           12,
		"ResourceQuota team-vision/gpu-quota":        8,
		"ResourceQuota team-recsys/gpu-quota":        16,
		"ResourceQuota batch-etl/gpu-quota":          4,
		"ResourceQuota research-notebooks/gpu-quota": 12,
		"ClusterQueue /training":                     20,
	}
	got := map[string]float64{}
	for _, q := range out.Quotas {
		got[q.Kind+" "+q.Namespace+"/"+q.Name] = q.Quota
		if q.Resource != "nvidia.com/gpu" {
			t.Errorf("%s %s: resource %q", q.Kind, q.Name, q.Resource)
		}
		if q.Kind == "ClusterQueue" {
			if q.Flavor != "default-flavor" || q.Borrowing != nil || !reflect.DeepEqual(q.Namespaces, []string{"team-nlp", "team-vision"}) {
				t.Errorf("ClusterQueue %+v: want flavor default-flavor, no borrowing limit, namespaces team-nlp and team-vision", q)
			}
			// Kueue's metrics do not say where the resource sits in the
			// spec: a JSON patch cannot be written.
			if q.Patch != "" {
				t.Errorf("ClusterQueue patch %q from the store", q.Patch)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("quotas %v, want %v", got, want)
	}
	if !slices.Contains(out.Notes, session.QuotasFromStore) || !strings.Contains(stderr.String(), session.QuotasFromStore) {
		t.Errorf("the source is not said: notes %q, stderr %q", out.Notes, stderr.String())
	}
}

// TestQuotaNoQuotaSeries: without cluster access and with a store that
// holds no quota series (a demo of namespaces the demo sets no quota
// for), no quota is known: exit 6, saying that the store lacks them too,
// and no output, rather than "no patches" as if every quota fitted. At
// main the message said only that no cluster could be read.
func TestQuotaNoQuotaSeries(t *testing.T) {
	tmp := t.TempDir()
	sc := filepath.Join(tmp, "fleet.yaml")
	if err := os.WriteFile(sc, []byte(`seed: 1
nodes:
  - name: gpu-l4-01
    system: l4
    gpus: 1
    pods:
      - {namespace: ml, name: infer, gpu: 0, load: inference, memory: 4GiB}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "tsdb")
	var stdout, stderr bytes.Buffer
	if code := execute([]string{"demo", "--scenario", sc, "--duration", "2h", "--end", "2026-01-05T14:00:00Z", "--step", "2m",
		"--data-dir", dir, "-o", "json"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("demo: exit %d: %s", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code := execute([]string{"quota", "--data-dir", dir, "--since", "2h", "--until", "2026-01-05T14:00:00Z", "--step", "2m",
		"--no-kubernetes", "-o", "yaml"}, &stdout, &stderr)
	for _, w := range []string{"no cluster access: the quotas are not known (--no-kubernetes", "the store holds no quota series either (kube_resourcequota", "kueue_cluster_queue_nominal_quota"} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr %q lacks %q", stderr.String(), w)
		}
	}
	if code != exitNoCluster || stdout.Len() != 0 {
		t.Errorf("exit %d (want %d), stdout %q (want none)", code, exitNoCluster, stdout.String())
	}
}
