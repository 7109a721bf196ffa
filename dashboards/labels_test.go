package dashboards

import (
	"context"
	"github.com/gpulens/gpulens/signals/dcgm"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/vocab"
)

// dcgm-exporter's label layouts as Prometheus stores them, with and
// without honor_labels, and the pod each must read as (empty: no pod
// holds the GPU).
var dcgmLayouts = []struct {
	name    string
	labels  []string
	wantPod string
}{
	{"honor_labels", []string{"Hostname", "n1", "UUID", "GPU-a", "gpu", "0", "modelName", "L4", "pod", "web-1", "namespace", "shop"}, "web-1"},
	{"exported labels", []string{"Hostname", "n1", "UUID", "GPU-b", "gpu", "1", "modelName", "L4",
		"pod", "nvidia-dcgm-exporter-x7k2p", "namespace", "gpu-operator", "exported_pod", "web-2", "exported_namespace", "shop"}, "web-2"},
	{"exporter's pod on a free GPU", []string{"Hostname", "n1", "UUID", "GPU-c", "gpu", "2", "modelName", "L4",
		"pod", "nvidia-dcgm-exporter-x7k2p", "namespace", "gpu-operator"}, ""},
	{"lower-case hostname", []string{"hostname", "n1", "UUID", "GPU-d", "gpu", "3", "modelName", "L4", "pod", "web-4", "namespace", "shop"}, "web-4"},
}

func TestDCGMLabelFallbacks(t *testing.T) {
	db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	app := db.Appender(context.Background())
	for _, l := range dcgmLayouts {
		for _, m := range []struct {
			name  string
			value float64
		}{{"DCGM_FI_DEV_FB_USED", 1000}, {"DCGM_FI_DEV_FB_FREE", 1000}, {"DCGM_FI_DEV_GPU_UTIL", 50}} {
			if _, err := app.Append(0, labels.FromStrings(append([]string{"__name__", m.name, "GPU_I_ID", ""}, l.labels...)...), at.UnixMilli(), m.value); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	var want, got []string
	for _, l := range dcgmLayouts {
		if l.wantPod != "" {
			want = append(want, "n1/"+l.wantPod)
		}
	}
	// The allocation's form, which the rule file records for the panels
	// (recordedEqualsInline).
	c := newChart(dcgm.Schema{}, vocab.DefaultClusterLabel).inline()
	vec, err := db.Query(context.Background(), substitute(c.alloc()), at)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range vec {
		got = append(got, string(s.Metric["node"])+"/"+string(s.Metric["pod"]))
		if s.Metric["namespace"] != "shop" || s.Metric["sharing"] != "none" || s.Value != 1 {
			t.Errorf("allocation %v = %v, want namespace shop, a whole GPU", s.Metric, s.Value)
		}
	}
	sort.Strings(got)
	if len(got) != len(want) {
		t.Fatalf("allocations %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("allocations %v, want %v", got, want)
		}
	}
	// The free GPU is unallocated, not the exporter's.
	vec, err = db.Query(context.Background(), substitute("count("+unallocatedGPUs(c)+")"), at)
	if err != nil || len(vec) != 1 || vec[0].Value != 1 {
		t.Errorf("unallocated GPUs %v (%v), want 1", vec, err)
	}
}
