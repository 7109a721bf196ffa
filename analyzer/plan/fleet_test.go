package plan

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"

	fleetmodel "github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/vocab"
)

// A week starting on a Monday, at a five-minute step: the plan's data
// is per step, so a week is what a plan has to be proven on; five
// minutes keeps the simulation to seconds.
var (
	weekStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	weekEnd   = weekStart.Add(7 * 24 * time.Hour)
	weekStep  = 5 * time.Minute
)

// simulateWeek runs s through the real exporter code into an embedded
// TSDB and fetches the plan's data from it with the real engine.
func simulateWeek(t *testing.T, s *sim.Scenario, sch signals.Schema) *Data {
	t.Helper()
	w := fleetmodel.Window{Start: weekStart, End: weekEnd, Step: weekStep}
	d, err := fetch(context.Background(), simulated(t, s, sch, w), sch, w, 0, Options{TrainingMinLoad: 0.8, TrainingMinHours: 2})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// simulated is s run over w through the real exporter code into an
// embedded TSDB, in sch's series.
func simulated(t *testing.T, s *sim.Scenario, sch signals.Schema, w fleetmodel.Window) source.Source {
	t.Helper()
	ctx := context.Background()
	db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var n atomic.Int64
	newSink := func(string) fleet.Sink { return fleet.NewTSDBSink(ctx, db, &n) }
	if sch.Name() == dcgm.SchemaName {
		// --kubernetes-virtual-gpus (before 2025): every tenant is seen,
		// with the device's figures copied to each.
		newSink = func(string) fleet.Sink {
			d := fleet.NewDCGMSink(fleet.NewTSDBSink(ctx, db, &n))
			d.Layout = fleet.DCGMVirtualGPUs
			return d
		}
	}
	if err := fleet.Run(ctx, fleet.Options{Scenario: s, Start: w.Start, End: w.End, Step: w.Step}, newSink); err != nil {
		t.Fatal(err)
	}
	return db
}

// checkReplay replays the plan once more in the test, from the
// assignments and the fetched lanes: no GPU or slice may hold more memory
// than it has at any step.
func checkReplay(t *testing.T, d *Data, p *Plan) {
	t.Helper()
	for _, pp := range p.Pools {
		if pp.Replay.OvercommittedSteps != 0 {
			t.Errorf("%s: replay has %d overcommitted steps", pp.Model, pp.Replay.OvercommittedSteps)
		}
		var pool *Pool
		for _, q := range d.Pools {
			if q.Model.Key == pp.Model {
				pool = q
			}
		}
		lanes := map[string]*Lane{}
		for _, l := range pool.Lanes {
			lanes[l.Name()] = l
		}
		placed := 0
		for _, g := range pp.GPUs {
			for step := 0; step < d.Steps; step++ {
				var sum float64
				for _, a := range pp.Assignments {
					if a.GPU != g.Index {
						continue
					}
					mem := float64(lanes[a.Lane].Mem[step])
					if a.Slice != "" {
						pr, _ := pool.Model.Profile(a.Slice)
						if mem > pr.MemoryBytes {
							t.Fatalf("%s GPU %d: %s uses %.1f GiB of its %s at step %d", pp.Model, g.Index, a.Lane, mem/gib, a.Slice, step)
						}
					}
					sum += mem
				}
				if g.Mode != ModeMIG && sum > pool.CapacityBytes {
					t.Fatalf("%s GPU %d: %.1f GiB in use at step %d, %.1f GiB there", pp.Model, g.Index, sum/gib, step, pool.CapacityBytes/gib)
				}
			}
		}
		placed += len(pp.Assignments)
		if placed != len(pool.Lanes) {
			t.Errorf("%s: %d lanes placed of %d", pp.Model, placed, len(pool.Lanes))
		}
	}
}

func TestDemoWeekPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a week of the demo's 38 GPUs")
	}
	sc := sim.Default()
	d := simulateWeek(t, sc, native.Schema{})
	prices := price.DefaultPrices()
	p, err := Make(d, DefaultPolicy(), prices)
	if err != nil {
		t.Fatal(err)
	}
	checkReplay(t, d, p)
	// The demo has unallocated GPUs and idle notebooks on whole GPUs:
	// any sensible plan needs fewer GPUs than there are.
	gpus, perNode := 0, map[string]int{}
	nodes := map[string]int{}
	for _, n := range sc.Nodes {
		gpus += n.GPUs
		perNode[n.System] = max(perNode[n.System], n.GPUs)
		nodes[n.System]++
	}
	if p.GPUsToday != gpus || p.GPUsNeeded >= p.GPUsToday {
		t.Errorf("plan needs %d of %d GPUs, want fewer than %d of %d", p.GPUsNeeded, p.GPUsToday, gpus, gpus)
	}
	// One pool per system (model): the DRA node's H100s pool with the
	// device plugin's. A pool's node shape is its largest node, and the
	// saving is the freed nodes' price: a node's GPUs at the table's
	// price, 730 hours a month.
	if len(p.Pools) != len(perNode) || p.NodesToday != len(sc.Nodes) {
		t.Fatalf("%d pools of %d nodes, want one per model of the scenario (%d) of %d", len(p.Pools), p.NodesToday, len(perNode), len(sc.Nodes))
	}
	var want float64
	for i, pp := range p.Pools {
		price, err := prices.PerHour(pp.Product)
		if err != nil {
			t.Fatal(err)
		}
		shape := pp.GPUsPerNode
		if !slices.Contains(slices.Collect(maps.Values(perNode)), shape) || pp.NodesNeeded < (pp.GPUsNeeded+shape-1)/shape {
			t.Errorf("%s: nodes %d → %d of %d GPUs for %d GPUs; want a scenario node's shape", pp.Model, pp.NodesToday, pp.NodesNeeded, shape, pp.GPUsNeeded)
		}
		saving := float64(pp.NodesToday-pp.NodesNeeded) * float64(shape) * price * vocab.HoursPerMonth
		if pp.MonthlySavingUSD == nil || math.Abs(*pp.MonthlySavingUSD-saving) > 0.01 {
			t.Errorf("pool %d %s: saving %v, want (%d − %d nodes) × %d GPUs × $%.2f × 730 h = %.2f", i, pp.Model, pp.MonthlySavingUSD, pp.NodesToday, pp.NodesNeeded, shape, price, saving)
		}
		if pp.HeadroomGPUs != pp.NodesNeeded*shape-pp.GPUsNeeded {
			t.Errorf("%s: headroom %d GPUs, want %d nodes × %d − %d", pp.Model, pp.HeadroomGPUs, pp.NodesNeeded, shape, pp.GPUsNeeded)
		}
		want += saving
	}
	if math.Abs(p.MonthlySavingUSD-want) > 0.01 {
		t.Errorf("headline saving %.2f, want the pools' freed nodes' %.2f", p.MonthlySavingUSD, want)
	}
	// The DRA node's workloads are planned as DRA lanes: llm-sft-0 (a
	// StatefulSet's name, to the pod-name inference), peggy-jupyter and
	// the two embed-serving pods that share a claim.
	var dra []string
	for _, pp := range p.Pools {
		for _, a := range pp.Assignments {
			if a.AllocationPath == "dra" {
				dra = append(dra, a.Lane)
			}
		}
	}
	slices.Sort(dra)
	if fmt.Sprint(dra) != "[Pod/research-notebooks/peggy-jupyter Pod/team-recsys/embed-serving-a Pod/team-recsys/embed-serving-b StatefulSet/team-nlp/llm-sft]" {
		t.Errorf("DRA lanes %v", dra)
	}
	// The nightly ETL jobs never run at the same time, each at 90% of an
	// A100: they take turns on one GPU (whole in a packed layout, the one
	// they time-slice today where the plan keeps today's).
	var mon, tue int = -1, -2
	for _, pp := range p.Pools {
		for _, a := range pp.Assignments {
			switch a.Lane {
			case "Pod/batch-etl/etl-nightly-mon":
				mon = a.GPU
			case "Pod/batch-etl/etl-nightly-tue":
				tue = a.GPU
			}
		}
	}
	if mon != tue {
		t.Errorf("nightly jobs on GPUs %d and %d, want one", mon, tue)
	}
	// Every workload of the scenario runs today on its pool's nodes: no
	// pool may need more nodes than the scenario gives it, or cost money.
	for _, pp := range p.Pools {
		if pp.NodesNeeded > pp.NodesToday || len(pp.DidNotFit) > 0 || pp.MonthlySavingUSD == nil || *pp.MonthlySavingUSD < 0 {
			t.Errorf("%s: nodes %d → %d, saving %s, did not fit %v; want no more nodes than today, and no cost", pp.Model, pp.NodesToday, pp.NodesNeeded, money(pp.MonthlySavingUSD), pp.DidNotFit)
		}
	}
	// The A100 node runs its workloads on 7 of its 8 GPUs, time-sliced
	// beside a whole one, which the packer puts on nodes of their own.
	// Where the plan keeps today's layout it is the scenario's, GPU for
	// GPU, but for the leak: projected past a whole A100 over one more
	// week, it gets a GPU to itself as the packer would give it, the one
	// no pod holds.
	for _, n := range sc.Nodes {
		if n.Name != "gpu-a100-01" {
			continue
		}
		gpuOfPod := map[string]int{}
		held := map[int]bool{}
		var leak sim.Pod
		for _, pod := range n.Pods {
			gpuOfPod[pod.Name], held[pod.GPU] = pod.GPU, true
			if pod.Load == sim.LoadLeak {
				leak = pod
			}
		}
		if float64(leak.Memory)+float64(leak.Growth)*weekEnd.Sub(weekStart).Hours() <= 80*gib || len(held) != n.GPUs-1 {
			t.Fatalf("scenario changed: the leak %s, %d of %d GPUs held", leak.Name, len(held), n.GPUs)
		}
		i := slices.IndexFunc(p.Pools, func(pp PoolPlan) bool { return pp.Model == "A100-80GB" })
		if i < 0 {
			t.Fatal("no A100-80GB pool")
		}
		pp := p.Pools[i]
		if pp.NodesToday != 1 || pp.NodesNeeded != 1 {
			t.Errorf("A100-80GB: nodes %d → %d, want the scenario's 1 → 1", pp.NodesToday, pp.NodesNeeded)
		}
		if !pp.KeepsToday {
			continue
		}
		if pp.GPUsNeeded != len(held)+1 {
			t.Errorf("A100-80GB keeps today's layout on %d GPUs, want the scenario's %d held GPUs and the leak's own", pp.GPUsNeeded, len(held))
		}
		today := map[int]int{} // planned GPU → the scenario's
		for _, a := range pp.Assignments {
			if a.Pods[0] == leak.Name {
				if !a.Moved || a.Mode != ModeWhole || len(pp.GPUs[a.GPU].Lanes) != 1 {
					t.Errorf("the leak on GPU %d (%s, moved %v) with %v, want a whole GPU of its own", a.GPU, a.Mode, a.Moved, pp.GPUs[a.GPU].Lanes)
				}
				continue
			}
			for _, pod := range a.Pods {
				g, ok := gpuOfPod[pod]
				if prev, seen := today[a.GPU]; !ok || a.Moved || (seen && prev != g) {
					t.Errorf("A100-80GB: %s (pod %s, moved %v) on planned GPU %d, which holds the scenario's GPU %d", a.Lane, pod, a.Moved, a.GPU, prev)
				}
				today[a.GPU] = g
			}
		}
	}
}

func TestScenarioWeeks(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a week per scenario")
	}
	paths, err := filepath.Glob("../findings/testdata/scenarios/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			s, err := sim.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			// Both schemas: dcgm-exporter's copies of a shared GPU's
			// memory to every tenant go through the device reconciliation.
			for _, sch := range []signals.Schema{native.Schema{}, dcgm.Schema{}} {
				d := simulateWeek(t, s, sch)
				p, err := Make(d, DefaultPolicy(), price.DefaultPrices())
				if err != nil {
					t.Fatalf("%s: %v", sch.Name(), err)
				}
				checkReplay(t, d, p)
			}
		})
	}
}

// TestLeakIsReserved: the leak's growth is planned for, not packed away
// under its co-tenant. From the scenario: the leak starts at its memory
// and adds its growth every hour; projected over one more week that is
// far more than the GPU, so it must have a GPU to itself, and the
// service next to it today a place of its own.
func TestLeakIsReserved(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a week")
	}
	s, err := sim.Load("../findings/testdata/scenarios/timeslice-oom-risk.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var leak sim.Pod
	for _, pod := range s.Nodes[0].Pods {
		if pod.Load == sim.LoadLeak {
			leak = pod
		}
	}
	d := simulateWeek(t, s, native.Schema{})
	capacity := d.Pools[0].CapacityBytes
	if projected := float64(leak.Memory) + float64(leak.Growth)*weekEnd.Sub(weekStart).Hours(); projected <= capacity {
		t.Fatalf("scenario changed: the leak projects to %.1f GiB, within the GPU's %.1f", projected/gib, capacity/gib)
	}
	p, err := Make(d, DefaultPolicy(), price.DefaultPrices())
	if err != nil {
		t.Fatal(err)
	}
	checkReplay(t, d, p)
	pp := p.Pools[0]
	leakLane := "Pod/" + leak.Namespace + "/" + leak.Name
	g := gpuOf(pp, leakLane)
	for _, a := range pp.Assignments {
		if a.Lane == leakLane && a.GrowthBytes <= 0 {
			t.Errorf("the leak has no growth reserved")
		}
		if a.GPU == g && a.Lane != leakLane {
			t.Errorf("%s shares the leak's GPU %d", a.Lane, g)
		}
	}
	if pp.GPUsNeeded != 2 {
		t.Errorf("%d GPUs, want 2: the leak alone and the service", pp.GPUsNeeded)
	}
}
