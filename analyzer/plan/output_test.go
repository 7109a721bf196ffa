package plan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/price"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenPlan is a small fleet with one of each kind of place: two L4
// services that take turns, an L4 notebook, two nightly jobs that take
// turns on a whole A100, and three light A100 trainers on MIG slices.
func goldenPlan(t *testing.T) *Plan {
	const steps = 200
	busyA := func(t int) float64 {
		if t%100 < 20 {
			return 0.7
		}
		return 0.05
	}
	busyB := func(t int) float64 {
		if t%100 >= 50 && t%100 < 70 {
			return 0.7
		}
		return 0.05
	}
	l4 := poolOf(t, "L4",
		series("svc-a", steps, constant(6), busyA),
		series("svc-b", steps, constant(6), busyB),
		series("notebook", steps, constant(3), constant(0.01)))
	// Two nodes of 2 L4s today, one node of 4 A100s.
	l4.GPUsToday, l4.Nodes, l4.GPUsPerNode = 4, 2, 2
	jobMon := series("etl-mon", steps, during(0, 80, 30), during(0, 80, 0.9))
	jobTue := series("etl-tue", steps, during(100, 180, 30), during(100, 180, 0.9))
	jobMon.Workload.Kind, jobTue.Workload.Kind = "CronJob", "CronJob"
	jobMon.Training, jobTue.Training = true, true
	a100 := []*Lane{jobMon, jobTue}
	for i := range 3 {
		l := series("trainer-"+string(rune('a'+i)), steps, constant(4), constant(0.2))
		l.Training, l.From = true, "time-slicing"
		a100 = append(a100, l)
	}
	pool := poolOf(t, "A100-80GB", a100...)
	pool.GPUsToday, pool.Nodes, pool.GPUsPerNode = 4, 1, 4
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	d := &Data{Start: start, End: start.Add(steps * time.Minute), Step: time.Minute, Steps: steps, Pools: []*Pool{l4, pool}}
	p, err := Make(d, DefaultPolicy(), price.DefaultPrices())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOutputGolden(t *testing.T) {
	p := goldenPlan(t)
	// What the golden files must show, whatever their layout: 8 GPUs
	// today, 3 needed (the L4 services and notebook on one time-sliced
	// GPU; the jobs in turn on one whole A100; three 2g.20gb trainers on
	// another), so 3 nodes → 2: one L4 node goes, the A100 node stays
	// with 2 GPUs of headroom.
	if p.GPUsToday != 8 || p.GPUsNeeded != 3 || p.NodesToday != 3 || p.NodesNeeded != 2 || p.HeadroomGPUs != 1+2 {
		t.Errorf("%d → %d GPUs, %d → %d nodes, %d headroom; want 8 → 3, 3 → 2, 3", p.GPUsToday, p.GPUsNeeded, p.NodesToday, p.NodesNeeded, p.HeadroomGPUs)
	}
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, p, format); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "plan."+format+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("differs from %s (go test -update rewrites it):\n%s", path, buf.String())
			}
		})
	}
}
