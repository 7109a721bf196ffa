package plan

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/signals/native"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
)

func TestLanes(t *testing.T) {
	src, f := pipelinetest.Open(t, "testdata/fleet.yaml")
	d, err := fetch(context.Background(), src, native.Schema{}, fleet.Window{Start: f.Start, End: f.End, Step: time.Minute}, 0, Options{TrainingMinLoad: 0.8, TrainingMinHours: 2})
	if err != nil {
		t.Fatal(err)
	}
	if d.Steps != 1440 {
		t.Errorf("%d steps, want 1440", d.Steps)
	}
	// The V100 is not in the catalog: said, not planned.
	if len(d.Pools) != 1 || d.Pools[0].Model.Key != "L4" {
		t.Fatalf("pools %v, want L4 only", d.Pools)
	}
	if len(d.Notes) != 1 || !strings.Contains(d.Notes[0], `"Tesla V100-SXM2-32GB" is not in the catalog`) {
		t.Errorf("notes %q", d.Notes)
	}
	pool := d.Pools[0]
	if pool.GPUsToday != 2 || pool.CapacityBytes != 22.5*gib {
		t.Errorf("%d GPUs of %.1f GiB, want 2 of 22.5 (the measured memory)", pool.GPUsToday, pool.CapacityBytes/gib)
	}
	lanes := map[string]*Lane{}
	for _, l := range pool.Lanes {
		lanes[l.Name()] = l
	}
	// The CronJob ran twice on two GPUs, never at once: one lane with
	// both pods. The Deployment's replicas ran together: two lanes.
	report := lanes["CronJob/batch/report"]
	if report == nil || len(report.Pods) != 2 || len(pool.Lanes) != 4 {
		t.Fatalf("lanes %v", keys(lanes))
	}
	a, b := lanes["Deployment/web/chat#1"], lanes["Deployment/web/chat#2"]
	if a == nil || b == nil {
		t.Fatalf("lanes %v", keys(lanes))
	}
	// At step 600 (10:01): the CronJob is between runs; each chat replica
	// has its memory and share × utilization of the GPU.
	const step = 600
	if report.Mem[step] != 0 || report.Load[step] != 0 {
		t.Errorf("CronJob between runs: %v bytes, load %v", report.Mem[step], report.Load[step])
	}
	if got := report.Mem[150]; got != 8*gib {
		t.Errorf("CronJob at 2:31: %v bytes, want 8 GiB", got)
	}
	// Idle is not absent: a notebook at 0 utilization still holds its
	// memory, which the plan must find room for.
	if nb := lanes["Pod/research/idle-notebook"]; nb == nil || nb.Mem[step] != 5*gib || nb.Load[step] != 0 {
		t.Errorf("idle notebook: %+v", nb)
	}
	chat := map[float32]float32{a.Mem[step] / gib: a.Load[step], b.Mem[step] / gib: b.Load[step]}
	if !approx(chat[6], 0.5*0.4) || !approx(chat[4], 0.5*0.2) {
		t.Errorf("chat replicas (GiB: load) %v, want 6: 0.2 and 4: 0.1", chat)
	}
}

func TestUnknownModelOnlyIsAnError(t *testing.T) {
	d := &Data{Notes: []string{`GPU model "Tesla V100-SXM2-32GB" is not in the catalog: its 1 GPUs are not planned`}}
	_, err := Make(d, DefaultPolicy(), price.DefaultPrices())
	if err == nil || !strings.Contains(err.Error(), "not in the catalog") || errors.Is(err, ErrReplay) {
		t.Errorf("error %v, want one naming the catalog", err)
	}
}

func TestEmptyWindow(t *testing.T) {
	src, f := pipelinetest.Open(t, "testdata/fleet.yaml")
	before := f.Start.Add(-48 * time.Hour)
	_, err := fetch(context.Background(), src, native.Schema{}, fleet.Window{Start: before, End: before.Add(24 * time.Hour), Step: time.Minute}, 0, Options{})
	if !errors.Is(err, ErrNoData) {
		t.Errorf("error %v, want ErrNoData", err)
	}
}

func approx(a, b float32) bool { return a-b < 1e-6 && b-a < 1e-6 }

func keys(m map[string]*Lane) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestFetchGridIsTheAnalysis: a window that does not start on a step is
// read at the analysis's instants (fleet.Window: the step's multiples
// since the epoch in (Start, End]), so the plan's steps and the report's
// are the same ones.
func TestLanesGridIsTheAnalysis(t *testing.T) {
	src, f := pipelinetest.Open(t, "testdata/fleet.yaml")
	start, end := f.Start.Add(30*time.Second), f.End
	d, err := fetch(context.Background(), src, native.Schema{}, fleet.Window{Start: start, End: end, Step: time.Minute}, 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// From the window: the minutes f.Start+1m .. f.End, every whole
	// minute of the fixture's day but its first (a grid counted from
	// Start would hold one fewer, each 30 s late).
	want := int(f.End.Sub(f.Start) / time.Minute)
	if w := (fleet.Window{Start: start, End: end, Step: time.Minute}); d.Steps != want || w.ExpectedSteps() != want {
		t.Errorf("%d plan steps, %d analysis steps; want %d", d.Steps, w.ExpectedSteps(), want)
	}
}
