package query

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
)

// TestShapesMatchPlainForms evaluates each shaped query next to the plain
// form it replaces and expects the same series with the same float64
// values, on fleets where a usage signal changes measurement method and an
// allocation its sharing mode (so groups have several series, overlapping)
// and on both schemas.
func TestShapesMatchPlainForms(t *testing.T) {
	methods := newFleet(t)
	nativeGPU(t, methods, "node-1", "GPU-a", a100, 1, 240, 0.5)
	methods.series(t, gpuLabels("gpulens_gpu_memory_total_bytes", "node-1", "GPU-a", a100, "x", "y"), 100, 200, constant(40*gib))
	methods.series(t, gpuLabels("gpulens_gpu_energy_joules_total", "node-1", "GPU-a", a100), 1, 240, func(i int) float64 { return 100 * float64(i%150) })
	methods.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", "node-1", "GPU-a", a100, "ns", "p", "none", "", ""), 1, 200, constant(1))
	methods.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", "node-1", "GPU-a", a100, "ns", "p", "time-slicing", "", ""), 150, 240, constant(0.5))
	methods.series(t, containerLabels("gpulens_container_gpu_utilization_ratio", "node-1", "GPU-a", a100, "ns", "p", "none", "", "", "method", "device"), 1, 100, func(i int) float64 { return float64(i%7) / 7 })
	methods.series(t, containerLabels("gpulens_container_gpu_utilization_ratio", "node-1", "GPU-a", a100, "ns", "p", "none", "", "", "method", "nvml"), 90, 200, func(i int) float64 { return float64(i%5) / 5 })
	methods.series(t, containerLabels("gpulens_container_gpu_memory_used_bytes", "node-1", "GPU-a", a100, "ns", "p", "none", "", "", "method", "device"), 1, 100, func(i int) float64 { return float64(i) * mib })
	methods.series(t, containerLabels("gpulens_container_gpu_memory_used_bytes", "node-1", "GPU-a", a100, "ns", "p", "none", "", "", "method", "nvml"), 50, 220, func(i int) float64 { return float64(300-i) * mib })
	methods.commit(t)

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
		{"method changes", methods.src, native.Schema{}, window},
		{"method changes, 7m steps", methods.src, native.Schema{}, fleet.Window{Start: t0.Add(3 * time.Minute), End: minute(237), Step: 7 * time.Minute}},
		{"native fixture", scraped("../../signals/testdata/native.prom"), native.Schema{}, fleet.Window{Start: t0, End: minute(120)}},
		{"dcgm-exporter fixture", scraped("../../signals/testdata/dcgm-exporter.prom"), dcgm.Schema{}, fleet.Window{Start: t0, End: minute(120)}},
	}
	for _, c := range cases {
		w, err := c.w.WithDefaults()
		if err != nil {
			t.Fatal(err)
		}
		a := &analysis{w: w}
		plainMax := func(labels []string, expr string) string { return "max by " + by(labels) + " (" + expr + ")" }
		gpuKey := by(signals.GPUKey)
		pairs := [][2]string{
			{a.over("count_over_time", maxBy(signals.AllocationKeyLabels, c.sch.Allocation())), a.over("count_over_time", plainMax(signals.AllocationKeyLabels, c.sch.Allocation()))},
			{a.over("avg_over_time", maxBy(signals.AllocationKeyLabels, c.sch.Utilization())), a.over("avg_over_time", plainMax(signals.AllocationKeyLabels, c.sch.Utilization()))},
			{a.over("last_over_time", maxBy(signals.AllocationKeyLabels, c.sch.MemoryUsed())), a.over("last_over_time", plainMax(signals.AllocationKeyLabels, c.sch.MemoryUsed()))},
			{a.over("count_over_time", maxBy(signals.GPULabels, c.sch.GPU())), a.over("count_over_time", plainMax(signals.GPULabels, c.sch.GPU()))},
			{a.over("avg_over_time", maxBy(signals.GPUKey, c.sch.GPUUtilization())), a.over("avg_over_time", plainMax(signals.GPUKey, c.sch.GPUUtilization()))},
			{maxBy(signals.GPUKey, c.sch.GPUEnergy(rangeStr(w), stepStr(w))), plainMax(signals.GPUKey, c.sch.GPUEnergy(rangeStr(w), stepStr(w)))},
			{a.maxOverTime(signals.AllocationKeyLabels, c.sch.MemoryUsed()), a.over("max_over_time", plainMax(signals.AllocationKeyLabels, c.sch.MemoryUsed()))},
			{a.maxOverTime(signals.GPUKey, c.sch.GPUMemoryTotal()), a.over("max_over_time", plainMax(signals.GPUKey, c.sch.GPUMemoryTotal()))},
			{
				a.over("count_over_time", maxBy(signals.GPUKey, c.sch.GPU())+" and on "+gpuKey+" "+presence(signals.GPUKey, c.sch.Allocation())),
				a.over("count_over_time", plainMax(signals.GPUKey, c.sch.GPU())+" and on "+gpuKey+" ("+c.sch.Allocation()+")"),
			},
		}
		for _, p := range pairs {
			got, want := evalSorted(t, c.src, p[0], w.End), evalSorted(t, c.src, p[1], w.End)
			if len(want) == 0 {
				t.Errorf("%s: %s: no series; the comparison proves nothing", c.name, p[1])
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s:\nshaped %s\n  = %v\nplain  %s\n  = %v", c.name, p[0], got, p[1], want)
			}
		}
	}
}

func evalSorted(t *testing.T, src source.Source, q string, ts time.Time) []string {
	t.Helper()
	vec, err := src.Query(context.Background(), q, ts)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range vec {
		// %b prints the float64 exactly, so equal strings are equal bits.
		out = append(out, fmt.Sprintf("%s %b", s.Metric, float64(s.Value)))
	}
	sort.Strings(out)
	return out
}
