package query

import (
	"context"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/signals/native"
)

// TestCoverageNotes: each count-based data-coverage note (notes) is
// written on data that lacks what it says is missing, and not on data
// that has it. The fleet is one whole H100 held by ml/train-0 over the
// 4h window (minutes 1..240), every series present throughout; each case
// takes one thing away, or keeps it, and expects its note alone to follow.
// These notes were right at main 36bc8ff: the test holds them so.
func TestCoverageNotes(t *testing.T) {
	const gpu = "GPU-a"
	info := gpuLabels("gpulens_gpu_info", "node-1", gpu, h100)
	gpuUtil := gpuLabels("gpulens_gpu_utilization_ratio", "node-1", gpu, h100)
	alloc := func(sharing string) func(f *testFleet, from, to int) {
		return func(f *testFleet, from, to int) {
			f.series(t, containerLabels("gpulens_container_gpu_allocation_ratio", "node-1", gpu, h100, "ml", "train-0", sharing, "", ""), from, to, constant(1))
		}
	}
	own := func(name string) func(f *testFleet, from, to int) {
		return func(f *testFleet, from, to int) {
			f.series(t, containerLabels(name, "node-1", gpu, h100, "ml", "train-0", "none", "", ""), from, to, constant(0.5))
		}
	}
	type part struct {
		write    func(f *testFleet, from, to int)
		from, to int
	}
	full := func(w func(f *testFleet, from, to int)) part { return part{w, 1, 240} }
	gpuInfo := func(f *testFleet, from, to int) { f.series(t, info, from, to, constant(1)) }
	gpuUtilization := func(f *testFleet, from, to int) { f.series(t, gpuUtil, from, to, constant(0.5)) }
	base := []part{full(gpuInfo), full(gpuUtilization), full(alloc("none")),
		full(own("gpulens_container_gpu_utilization_ratio")), full(own("gpulens_container_gpu_memory_used_bytes"))}
	with := func(i int, p part) []part {
		out := append([]part{}, base...)
		out[i] = p
		return out
	}
	without := func(i int) []part { return append(append([]part{}, base[:i]...), base[i+1:]...) }
	notes := map[string]string{
		"partial GPU":     "GPUs reported for only part of the window",
		"GPU no util":     "GPUs have no utilization samples",
		"allocation util": "allocations have no utilization samples",
		"partial util":    "allocations have utilization samples for only part of the time they were held",
		"sharing changed": "allocations changed sharing mode within the window",
		"no GPU series":   "no GPU series in the window",
	}
	for _, tt := range []struct {
		name  string
		parts []part
		want  string // the note's key, or "" for none
	}{
		{"every series throughout", base, ""},
		{"the GPU reported half the window", with(0, part{gpuInfo, 1, 120}), "partial GPU"},
		{"no GPU utilization", without(1), "GPU no util"},
		{"no allocation utilization", without(3), "allocation util"},
		{"allocation utilization for half its time", with(3, part{own("gpulens_container_gpu_utilization_ratio"), 1, 120}), "partial util"},
		// Only a tenant's series, no GPU's: the store has the exporter's
		// names, not its GPUs.
		{"no GPU series", []part{full(own("gpulens_container_gpu_utilization_ratio"))}, "no GPU series"},
		{"sharing changed half way", append(with(2, part{alloc("none"), 1, 120}), part{alloc("time-slicing"), 121, 240}), "sharing changed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFleet(t)
			for _, p := range tt.parts {
				p.write(f, p.from, p.to)
			}
			res, err := Analyze(context.Background(), f.commit(t), native.Schema{}, window)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(res.Notes, "\n")
			for key, phrase := range notes {
				if want := key == tt.want; strings.Contains(got, phrase) != want {
					t.Errorf("note %q written: %v, want %v; notes:\n%s", key, !want, want, got)
				}
			}
		})
	}
}
