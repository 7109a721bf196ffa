package query

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals/dcgm"
)

// attributionNote keys each coverage note attributionNotes writes by a
// phrase only it has.
var attributionNote = map[string]string{
	"relabelled":  "relabelled by a ServiceMonitor with honorLabels: false",
	"copies":      "report the device's utilization and memory on every tenant",
	"one-tenant":  "show at most one pod per device",
	"per-process": "per-tenant figures from dcgm-exporter's per-process series",
}

// dcgmRow is one dcgm-exporter series of a whole H100 on node-1, with the
// labels the release writes (gpu, UUID, modelName, Hostname) and kv.
func dcgmRow(name, uuid string, kv ...string) labels.Labels {
	return labels.FromStrings(append([]string{"__name__", name, "gpu", "0", "UUID", uuid, "modelName", h100, "Hostname", "node-1"}, kv...)...)
}

// rowsOf writes each field's row over minutes [from, to]; stale says
// whether the series end with a staleness marker (Prometheus's scrape
// loop) or just stop (a backfill, federation, a copy of the TSDB).
func rowsOf(t *testing.T, f *testFleet, uuid string, fields map[string]float64, from, to int, stale bool, kv ...string) {
	t.Helper()
	for name, v := range fields {
		lset := dcgmRow(name, uuid, kv...)
		if stale {
			f.series(t, lset, from, to, constant(v))
			continue
		}
		for i := from; i <= to; i++ {
			if _, err := f.app.Append(0, lset, minute(i).UnixMilli(), v); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestAttributionNotes: each data-coverage note on how tenants were
// attributed is written on data that has what it claims, and on no data
// that lacks it. The layouts are dcgm-exporter's (d5e5f51,
// internal/pkg/transformation/kubernetes.go, PodMapper.Process): the
// default layout labels each field of a held device with its one pod
// (414-452); --kubernetes-virtual-gpus before #594 copies every field per
// pod, with vgpu (7b8b700, 271-299); from #594 on GPU_UTIL and FB_USED
// keep the device's row beside one per pod of its own processes, which
// always carries pod_uid (createPerProcessMetrics 201-252, pod_uid 243;
// isPerProcessMetric, process_metrics.go:30-32), and the other fields are
// copies per pod (360-403). honorLabels: false moves the tenant to
// exported_* and puts the exporter's own pod in pod (Prometheus's
// scrape.mutateSampleLabels).
//
// At main 36bc8ff the "pod leaves in a backfill" case failed: the
// default layout's pod row, lingering for the lookback without a
// staleness marker beside the device's own row that replaced it, read as
// the 2025 per-process layout, and the note claimed per-process series
// the data does not have (issue 53, item 6).
func TestAttributionNotes(t *testing.T) {
	const (
		uuidA = "GPU-a"
		mib   = 1 // dcgm-exporter's memory fields are in MiB
	)
	whole := map[string]float64{dcgm.FBUsed: 2000 * mib, dcgm.FBFree: 79000 * mib, dcgm.GPUUtil: 40, dcgm.GREngineActive: 0.4}
	tenant := []string{"namespace", "ml", "pod", "train-0", "container", "main"}
	for _, tt := range []struct {
		name  string
		write func(t *testing.T, f *testFleet)
		want  []string
	}{
		{"default layout, one pod per GPU", func(t *testing.T, f *testFleet) {
			rowsOf(t, f, uuidA, whole, 1, 240, true, tenant...)
		}, []string{"one-tenant"}},
		{"default layout through honorLabels: false", func(t *testing.T, f *testFleet) {
			rowsOf(t, f, uuidA, whole, 1, 240, true, "namespace", "gpu-operator", "pod", "nvidia-dcgm-exporter-x1", "container", "nvidia-dcgm-exporter",
				"exported_namespace", "ml", "exported_pod", "train-0", "exported_container", "main")
		}, []string{"relabelled", "one-tenant"}},
		{"virtual GPUs before 2025, two pods on a time-sliced GPU", func(t *testing.T, f *testFleet) {
			rowsOf(t, f, uuidA, whole, 1, 240, true, "namespace", "ml", "pod", "ts-0", "container", "main", "vgpu", "0")
			rowsOf(t, f, uuidA, whole, 1, 240, true, "namespace", "ml", "pod", "ts-1", "container", "main", "vgpu", "1")
		}, []string{"copies"}},
		{"virtual GPUs from 2025, per-process rows beside the device's", func(t *testing.T, f *testFleet) {
			device := map[string]float64{dcgm.FBUsed: 2500 * mib, dcgm.GPUUtil: 40}
			own := map[string]float64{dcgm.FBUsed: 2000 * mib, dcgm.GPUUtil: 40}
			copies := map[string]float64{dcgm.FBFree: 79000 * mib, dcgm.GREngineActive: 0.4}
			rowsOf(t, f, uuidA, device, 1, 240, true)
			rowsOf(t, f, uuidA, own, 1, 240, true, append([]string{"pod_uid", "uid-train-0"}, tenant...)...)
			rowsOf(t, f, uuidA, copies, 1, 240, true, tenant...)
		}, []string{"per-process"}},
		{"default layout, pod leaves in a backfill", func(t *testing.T, f *testFleet) {
			// No staleness markers: the pod's rows stay visible for the
			// lookback (5 minutes) beside the device's own rows that
			// replace them at minute 121.
			rowsOf(t, f, uuidA, whole, 1, 120, false, tenant...)
			rowsOf(t, f, uuidA, whole, 121, 240, false)
		}, []string{"one-tenant"}},
	} {
		f := newFleet(t)
		tt.write(t, f)
		src := f.commit(t)
		for _, path := range []struct {
			name string
			run  func() (*fleet.Result, error)
		}{
			{"passes", func() (*fleet.Result, error) {
				return analyze(context.Background(), src, dcgm.Schema{}, window, (*analysis).passQueries)
			}},
			{"scans", func() (*fleet.Result, error) {
				return analyze(context.Background(), promqlOnly(src), dcgm.Schema{}, window, (*analysis).scanQueries)
			}},
		} {
			t.Run(tt.name+"/"+path.name, func(t *testing.T) {
				res, err := path.run()
				if err != nil {
					t.Fatal(err)
				}
				notes := strings.Join(res.Notes, "\n")
				for key, phrase := range attributionNote {
					if want := slices.Contains(tt.want, key); strings.Contains(notes, phrase) != want {
						t.Errorf("note %q written: %v, want %v; notes:\n%s", key, !want, want, notes)
					}
				}
			})
		}
	}
}
