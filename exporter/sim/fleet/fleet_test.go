package fleet

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gpulens/gpulens/exporter/sim"
)

// recorder is a Sink that keeps what it was given.
type recorder struct {
	mu      *sync.Mutex
	samples map[string]int // metric name -> samples
	steps   map[string]int // node -> steps
	node    string
	closed  bool
}

func (r *recorder) Append(_ time.Time, name string, _ []*dto.LabelPair, v float64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if math.IsNaN(v) {
		panic("NaN appended")
	}
	r.samples[name]++
	return nil
}

func (r *recorder) EndStep(time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps[r.node]++
	return nil
}

func (r *recorder) Close() error { r.closed = true; return nil }

func TestRunCoversEveryNodeAndStep(t *testing.T) {
	sc := sim.Default()
	end := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	samples, steps := map[string]int{}, map[string]int{}
	var sinks []*recorder
	var progress int
	err := Run(context.Background(), Options{Scenario: sc, Start: end.Add(-30 * time.Minute), End: end, Step: time.Minute,
		Progress: func(done, total int) {
			mu.Lock()
			progress = max(progress, done)
			mu.Unlock()
			if total != 31*len(sc.Nodes) {
				t.Errorf("total %d", total)
			}
		}},
		func(node string) Sink {
			r := &recorder{mu: &mu, samples: samples, steps: steps, node: node}
			sinks = append(sinks, r)
			return r
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range sc.Nodes {
		if steps[n.Name] != 31 {
			t.Errorf("node %s: %d steps, want 31", n.Name, steps[n.Name])
		}
	}
	if progress != 31*len(sc.Nodes) {
		t.Errorf("progress reached %d", progress)
	}
	for _, r := range sinks {
		if !r.closed {
			t.Errorf("sink of %s not closed", r.node)
		}
	}
	// Every GPU of the scenario reports every step; containers are
	// attributed through the real attribution path.
	gpus, claimed := 0, 0
	for _, n := range sc.Nodes {
		gpus += n.GPUs
		for _, p := range n.Pods {
			// Pods of DRA nodes that run the whole window hold one claimed GPU each.
			if n.DRA && p.Start == 0 && p.End == 0 {
				claimed++
			}
		}
	}
	if got, want := samples["gpulens_gpu_up"], 31*gpus; got != want {
		t.Errorf("gpulens_gpu_up samples %d, want %d", got, want)
	}
	if got, want := samples["gpulens_container_gpu_claim_info"], 31*claimed; got != want || claimed == 0 {
		t.Errorf("gpulens_container_gpu_claim_info samples %d, want %d (the DRA node's %d claimed devices)", got, want, claimed)
	}
	if samples["gpulens_container_gpu_allocation_ratio"] == 0 || samples["gpulens_container_gpu_utilization_ratio"] == 0 {
		t.Errorf("no container series: %v", samples)
	}
}

func TestRunRejectsBadWindows(t *testing.T) {
	end := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	newSink := func(string) Sink {
		return &recorder{mu: &sync.Mutex{}, samples: map[string]int{}, steps: map[string]int{}}
	}
	if err := Run(context.Background(), Options{Scenario: sim.Default(), Start: end, End: end}, newSink); err == nil {
		t.Error("empty window accepted")
	}
	if err := Run(context.Background(), Options{Scenario: &sim.Scenario{}, Start: end.Add(-time.Hour), End: end}, newSink); err == nil {
		t.Error("scenario without nodes accepted")
	}
}
