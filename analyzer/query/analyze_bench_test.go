package query

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"

	"github.com/gpulens/gpulens/analyzer/schema"
)

// BenchmarkAnalyze runs the query set over 7 days at 1-minute resolution
// for fleets of 100 and 1000 whole GPUs, each held by one container, on the
// embedded engine. Setup (generating ~7 series × 10080 samples per GPU)
// is excluded from the timing. queries/op must not change with the size.
func BenchmarkAnalyze(b *testing.B) {
	for _, gpus := range []int{100, 1000} {
		b.Run(fmt.Sprintf("gpus=%d", gpus), func(b *testing.B) {
			const days = 7
			f := newFleet(b)
			generateFleet(b, f, gpus, days*24*60)
			w := Window{Start: t0, End: minute(days * 24 * 60), Step: time.Minute}
			b.ResetTimer()
			var res *Result
			for b.Loop() {
				var err error
				if res, err = Analyze(context.Background(), f.src, schema.Native{}, w); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if len(res.GPUs) != gpus || len(res.Allocations) != gpus {
				b.Fatalf("got %d GPUs and %d allocations, want %d", len(res.GPUs), len(res.Allocations), gpus)
			}
			b.ReportMetric(float64(res.QueryCount), "queries/op")
		})
	}
}

// generateFleet appends in time order, one minute of the whole fleet per
// commit, as a scrape would, so the TSDB takes the fast in-order path.
func generateFleet(b *testing.B, f *fleet, gpus, minutes int) {
	b.Helper()
	type gen struct {
		lset labels.Labels
		ref  storage.SeriesRef
		v    func(g, i int) float64
	}
	var all []*gen
	for g := range gpus {
		node, uuid := fmt.Sprintf("node-%d", g/8), fmt.Sprintf("GPU-%05d", g)
		pod := fmt.Sprintf("job-%d", g)
		add := func(l labels.Labels, v func(g, i int) float64) { all = append(all, &gen{lset: l, v: v}) }
		add(gpuLabels("gpulens_gpu_info", node, uuid, a100), func(int, int) float64 { return 1 })
		add(gpuLabels("gpulens_gpu_utilization_ratio", node, uuid, a100), func(g, i int) float64 { return float64((g+i)%10) / 10 })
		add(gpuLabels("gpulens_gpu_memory_total_bytes", node, uuid, a100), func(int, int) float64 { return 80 * gib })
		add(gpuLabels("gpulens_gpu_energy_joules_total", node, uuid, a100), func(_, i int) float64 { return 300 * 60 * float64(i) })
		add(containerLabels("gpulens_container_gpu_allocation_ratio", node, uuid, a100, "team", pod, "none", "", ""), func(int, int) float64 { return 1 })
		add(containerLabels("gpulens_container_gpu_utilization_ratio", node, uuid, a100, "team", pod, "none", "", "", "method", "device"), func(g, i int) float64 { return float64((g+i)%10) / 10 })
		add(containerLabels("gpulens_container_gpu_memory_used_bytes", node, uuid, a100, "team", pod, "none", "", "", "method", "device"), func(g, i int) float64 { return float64((g*i)%80) * gib })
	}
	for i := 1; i <= minutes; i++ {
		ts := minute(i).UnixMilli()
		for g, s := range all {
			ref, err := f.app.Append(s.ref, s.lset, ts, s.v(g/7, i))
			if err != nil {
				b.Fatal(err)
			}
			s.ref = ref
		}
		f.commit(b)
	}
}
