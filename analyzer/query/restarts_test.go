package query

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/native"
)

// TestRestartsWithGPUMemory: kube-state-metrics' restart counter of a GPU
// container is read as restarts at the first step it is seen higher,
// each with the GPU's memory just before (the larger of the two steps
// it died between), and its ends' reasons and exit code; both query sets
// read the same. leaky dies at minute 100 with its GPU at 80 GiB, calm
// restarts at minute 50 with it at 40 GiB while its own series are
// absent (it held the GPU before and after), and a CPU pod's restarts and
// ends are no GPU allocation's. A restart is dated by the first step
// that counts it, its memory the GPU's at the step before. At main 36bc8ff no restart series was
// read: every allocation had none.
//
// Series as kube-state-metrics writes them (docs/metrics/workload/
// pod-metrics.md): restarts_total, last_terminated_reason (reason) and
// last_terminated_exitcode (v2.7.0, #1752), labelled namespace, pod,
// container and uid, scraped with job and instance.
func TestRestartsWithGPUMemory(t *testing.T) {
	f := newFleet(t)
	nativeGPU(t, f, "node-1", "GPU-1", a100, 1, 240, 0.5)
	f.series(t, gpuLabels(native.GPUMemoryUsedBytes, "node-1", "GPU-1", a100), 1, 240, func(i int) float64 {
		switch {
		case i <= 60:
			return 40 * gib
		case i <= 100:
			return (70 + float64(i-90)) * gib // 79 GiB at minute 99, 80 at 100
		}
		return 20 * gib
	})
	tenant := func(p string) container {
		return container{node: "node-1", uuid: "GPU-1", model: a100, ns: "ml", pod: p, sharing: "time-slicing", share: 0.5,
			util: constant(0.3), mem: constant(gib)}
	}
	tenant("leaky").write(t, f, 1, 240)
	// calm's series leave a gap around its restart, as a flapping pod
	// label does: it is still the GPU's tenant.
	tenant("calm").write(t, f, 1, 40)
	tenant("calm").write(t, f, 60, 240)
	ksm := func(name, pod string, extra ...string) labels.Labels {
		return labels.FromStrings(append([]string{"__name__", name, "namespace", "ml", "pod", pod, "container", "main", "uid", "uid-" + pod,
			"job", "kube-state-metrics", "instance", "10.0.0.9:8080"}, extra...)...)
	}
	step := func(at int) func(int) float64 {
		return func(i int) float64 {
			if i > at {
				return 1
			}
			return 0
		}
	}
	// leaky dies within minute 100's step: the count is 1 from 101; and
	// again after the window, which the store holds (2 from 241): not
	// the window's.
	f.series(t, ksm(signals.ContainerRestarts, "leaky"), 1, 250, func(i int) float64 { return step(100)(i) + step(240)(i) })
	f.series(t, ksm(signals.ContainerLastTerminatedReason, "leaky", "reason", "Error"), 101, 240, constant(1))
	f.series(t, ksm(signals.ContainerLastTerminatedExitCode, "leaky"), 101, 240, constant(1))
	f.series(t, ksm(signals.ContainerRestarts, "calm"), 1, 240, step(50))
	f.series(t, ksm(signals.ContainerLastTerminatedReason, "calm", "reason", "Completed"), 51, 240, constant(1))
	f.series(t, ksm(signals.ContainerRestarts, "cpu-only"), 1, 240, step(10))
	f.series(t, ksm(signals.ContainerLastTerminatedReason, "cpu-only", "reason", "OOMKilled"), 11, 240, constant(1))
	src := f.commit(t)

	want := map[string]struct {
		restarts []fleet.Restart
		ended    *fleet.Termination
	}{
		"leaky": {[]fleet.Restart{{Time: minute(101), GPUMemoryBytes: 80 * gib}}, &fleet.Termination{Reasons: []string{"Error"}, ExitCode: 1, HasExitCode: true}},
		"calm":  {[]fleet.Restart{{Time: minute(51), GPUMemoryBytes: 40 * gib}}, &fleet.Termination{Reasons: []string{"Completed"}}},
	}
	var results []*fleet.Result
	// The scans through the engine, the passes as the store allows.
	for _, p := range []struct {
		src  source.Source
		plan queryPlan
	}{{promqlOnly(src), (*analysis).scanQueries}, {src, (*analysis).passQueries}} {
		res, err := analyze(context.Background(), p.src, native.Schema{}, window, p.plan)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
		if len(res.Allocations) != 2 {
			t.Fatalf("%d allocations, want leaky's and calm's", len(res.Allocations))
		}
		for _, a := range res.Allocations {
			w := want[a.Pod]
			for i := range a.Restarts {
				a.Restarts[i].Time = a.Restarts[i].Time.In(time.UTC)
			}
			if !reflect.DeepEqual(a.Restarts, w.restarts) || !reflect.DeepEqual(a.Terminated, w.ended) {
				t.Errorf("%s: restarts %+v, ended %+v; want %+v, %+v", a.Pod, a.Restarts, a.Terminated, w.restarts, w.ended)
			}
		}
	}
	for _, d := range resultDiff("Result", reflect.ValueOf(*results[0]), reflect.ValueOf(*results[1])) {
		t.Error("scans and passes differ:", d)
	}
}
