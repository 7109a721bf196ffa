package query

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/prometheus/common/model"
)

// TestPassesMatchScans analyses each fixture twice, with the subquery per
// figure (scanQueries, the query set before the passes) and with one pass
// per signal (passQueries), and expects the same Result field by field.
// The analysis runs only the passes, on every source; scanQueries lives in
// scanqueries_test.go as their independent oracle: every figure and
// aggregation the engine's own, none of stats.go's arithmetic or the
// passes' groupings. The Results compare:
// allocations, GPUs, workloads, owners and notes, floats within 1e-9
// relative where the summation order differs. The fixtures have groups of
// several series (a method or a sharing mode that changes), MIG, time
// slicing, gaps, both schemas, and a step that does not divide the window.
func TestPassesMatchScans(t *testing.T) {
	methods := methodsFleet(t)

	scraped := func(file string) source.Source {
		f := newFleet(t)
		f.scrape(t, file, 1, 90)
		return f.commit(t)
	}
	cases := []struct {
		name string
		src  source.Source
		sch  signals.Schema
		w    fleet.Window
	}{
		{"native fleet", buildFleet(t).src, native.Schema{}, window},
		{"methods and sharing change", methods.src, native.Schema{}, window},
		{"methods and sharing change, 7m steps", methods.src, native.Schema{}, fleet.Window{Start: t0.Add(3 * time.Minute), End: minute(237), Step: 7 * time.Minute}},
		{"native fixture", scraped("../../signals/testdata/native.prom"), native.Schema{}, fleet.Window{Start: t0, End: minute(120)}},
		{"dcgm-exporter fixture", scraped("../../signals/testdata/dcgm-exporter.prom"), dcgm.Schema{}, fleet.Window{Start: t0, End: minute(120)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The scans through the engine, the passes from raw samples.
			scans, err := analyze(context.Background(), promqlOnly(c.src), c.sch, c.w, (*analysis).scanQueries)
			if err != nil {
				t.Fatal(err)
			}
			passes, err := analyze(context.Background(), c.src, c.sch, c.w, (*analysis).passQueries)
			if err != nil {
				t.Fatal(err)
			}
			if len(scans.Allocations) == 0 || len(scans.GPUs) == 0 {
				t.Fatalf("scans found %d allocations and %d GPUs: the fixture proves nothing", len(scans.Allocations), len(scans.GPUs))
			}
			if passes.QueryCount >= scans.QueryCount {
				t.Errorf("passes issued %d queries, scans %d", passes.QueryCount, scans.QueryCount)
			}
			passes.QueryCount = scans.QueryCount
			for _, d := range resultDiff("Result", reflect.ValueOf(*scans), reflect.ValueOf(*passes)) {
				t.Error(d)
			}
		})
	}
}

// pathCounters are the Result fields that count how the answers were
// read, which differ between query sets and paths by design.
var pathCounters = map[string]bool{"QueryCount": true, "Passes": true, "RawPasses": true, "RawQueries": true}

// resultDiff lists where got differs from want, floats within 1e-9
// relative, the path counters aside.
func resultDiff(path string, want, got reflect.Value) []string {
	if want.Type() == reflect.TypeFor[time.Time]() || want.Kind() == reflect.Map {
		if !reflect.DeepEqual(want.Interface(), got.Interface()) {
			return []string{fmt.Sprintf("%s: passes %v, scans %v", path, got.Interface(), want.Interface())}
		}
		return nil
	}
	switch want.Kind() {
	case reflect.Float64:
		w, g := want.Float(), got.Float()
		if w == g || (math.IsNaN(w) && math.IsNaN(g)) || math.Abs(w-g) <= 1e-9*math.Max(math.Abs(w), math.Abs(g)) {
			return nil
		}
		return []string{fmt.Sprintf("%s: passes %v, scans %v", path, g, w)}
	case reflect.Struct:
		var out []string
		for i := range want.NumField() {
			if pathCounters[want.Type().Field(i).Name] {
				continue
			}
			out = append(out, resultDiff(path+"."+want.Type().Field(i).Name, want.Field(i), got.Field(i))...)
		}
		return out
	case reflect.Slice:
		if want.Len() != got.Len() {
			return []string{fmt.Sprintf("%s: passes %d elements, scans %d", path, got.Len(), want.Len())}
		}
		var out []string
		for i := range want.Len() {
			out = append(out, resultDiff(fmt.Sprintf("%s[%d]", path, i), want.Index(i), got.Index(i))...)
		}
		return out
	default:
		if !reflect.DeepEqual(want.Interface(), got.Interface()) {
			return []string{fmt.Sprintf("%s: passes %v, scans %v", path, got.Interface(), want.Interface())}
		}
		return nil
	}
}

// piecedSource hides the embedded source's MaxRangeSteps, so queryWindow
// reads a long window in pieces of maxRangeSteps as it does from
// Prometheus, and counts the range queries.
type piecedSource struct {
	source.Source
	rq      source.RangeQuerier
	queries *atomic.Int64
}

func (p piecedSource) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	p.queries.Add(1)
	return p.rq.QueryRange(ctx, q, start, end, step)
}

// TestOneRangeQueryMatchesPieces analyses a week of minutes (10,080 steps)
// from the embedded source, which reads each pass in one range query, and
// through a source that cuts it into pieces of maxRangeSteps, and expects
// the same Result.
func TestOneRangeQueryMatchesPieces(t *testing.T) {
	const gpus, minutes = 3, 7 * 24 * 60
	f := newFleet(t)
	generateFleet(t, f, gpus, minutes)
	w := fleet.Window{Start: t0, End: minute(minutes), Step: time.Minute}
	one, err := analyze(context.Background(), promqlOnly(f.src), native.Schema{}, w, (*analysis).passQueries)
	if err != nil {
		t.Fatal(err)
	}
	p := piecedSource{Source: f.src, rq: f.src, queries: new(atomic.Int64)}
	pieced, err := analyze(context.Background(), p, native.Schema{}, w, (*analysis).passQueries)
	if err != nil {
		t.Fatal(err)
	}
	if n := p.queries.Load(); n < 2 || n%2 != 0 {
		t.Fatalf("pieced source: %d range queries, want two a pass", n)
	}
	if len(one.GPUs) != gpus || len(one.Allocations) != gpus {
		t.Fatalf("got %d GPUs and %d allocations, want %d", len(one.GPUs), len(one.Allocations), gpus)
	}
	if !reflect.DeepEqual(one, pieced) {
		t.Errorf("one range query:\n%+v\npieces:\n%+v", one, pieced)
	}
}

// methodsFleet is one GPU whose allocations, utilization and memory come
// in several series over the window: a measurement method and a sharing
// mode that change, a second tenant, gaps.
func methodsFleet(t *testing.T) *testFleet {
	t.Helper()
	methods := newFleet(t)
	nativeGPU(t, methods, "node-1", "GPU-a", a100, 1, 240, 0.5)
	methods.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", "node-1", "GPU-a", a100, "ns", "p-0", "none", "", ""), 1, 200, constant(1))
	methods.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", "node-1", "GPU-a", a100, "ns", "p-0", "time-slicing", "", ""), 150, 240, constant(0.5))
	methods.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", "node-1", "GPU-a", a100, "ns", "p-1", "time-slicing", "", ""), 150, 240, constant(1.0/3))
	methods.series(t, containerLabels("gpulens_container_gpu_utilization_ratio", "node-1", "GPU-a", a100, "ns", "p-0", "none", "", "", "method", "device"), 1, 100, func(i int) float64 { return float64(i%7) / 7 })
	methods.series(t, containerLabels("gpulens_container_gpu_utilization_ratio", "node-1", "GPU-a", a100, "ns", "p-0", "none", "", "", "method", "nvml"), 90, 200, func(i int) float64 { return float64(i%5) / 5 })
	methods.series(t, containerLabels("gpulens_container_gpu_utilization_ratio", "node-1", "GPU-a", a100, "ns", "p-1", "none", "", "", "method", "nvml"), 150, 240, func(i int) float64 { return float64(i%3) / 3 })
	methods.series(t, containerLabels("gpulens_container_gpu_memory_used_bytes", "node-1", "GPU-a", a100, "ns", "p-0", "none", "", "", "method", "device"), 1, 100, func(i int) float64 { return float64(i) * mib })
	methods.series(t, containerLabels("gpulens_container_gpu_memory_used_bytes", "node-1", "GPU-a", a100, "ns", "p-0", "none", "", "", "method", "nvml"), 50, 220, func(i int) float64 { return float64(300-i) * mib })
	methods.series(t, containerLabels("gpulens_container_gpu_memory_used_bytes", "node-1", "GPU-a", a100, "ns", "p-1", "none", "", "", "method", "nvml"), 150, 240, func(i int) float64 { return float64(i*i) * mib })
	methods.series(t, gpuLabels("gpulens_gpu_memory_used_bytes", "node-1", "GPU-a", a100), 1, 240, func(i int) float64 { return float64(i%50) * gib })
	methods.commit(t)
	return methods
}
