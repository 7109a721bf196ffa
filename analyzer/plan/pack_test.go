package plan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

const gib = 1 << 30

// series builds a lane from per-step functions of memory (GiB) and load;
// a step where both are 0 is one where no pod of the lane ran.
func series(name string, steps int, mem func(t int) float64, load func(t int) float64) *Lane {
	l := &Lane{Workload: workload.Ref{Kind: "Deployment", Namespace: "ns", Name: name, Container: "main"}, From: "whole",
		Mem: make([]float32, steps), Load: make([]float32, steps)}
	for t := 0; t < steps; t++ {
		l.Mem[t], l.Load[t] = float32(mem(t)*gib), float32(load(t))
	}
	return l
}

func constant(v float64) func(int) float64 { return func(int) float64 { return v } }

// during is v at steps [from, to) and 0 elsewhere.
func during(from, to int, v float64) func(int) float64 {
	return func(t int) float64 {
		if t >= from && t < to {
			return v
		}
		return 0
	}
}

func poolOf(t *testing.T, product string, lanes ...*Lane) *Pool {
	t.Helper()
	m, ok := lookupModel(product)
	if !ok {
		t.Fatalf("%s is not in the catalog", product)
	}
	return &Pool{Product: product, Model: m, CapacityBytes: m.MemoryBytes, GPUsToday: len(lanes), Lanes: lanes}
}

func planOf(t *testing.T, pol Policy, pool *Pool) PoolPlan {
	t.Helper()
	p, err := Make(&Data{Pools: []*Pool{pool}, Steps: len(pool.Lanes[0].Mem)}, pol, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p.Pools[0]
}

// gpuOf is the planned GPU of the named lane.
func gpuOf(pp PoolPlan, lane string) int {
	for _, a := range pp.Assignments {
		if a.Lane == lane {
			return a.GPU
		}
	}
	return -1
}

// The cases are built so that summaries cannot tell them apart: in each
// pair the two workloads have the same p95 load and peak memory, and
// whether they fit one GPU depends only on when their busy steps fall.
func TestTurnsPackAndCoincidingPeaksDoNot(t *testing.T) {
	const steps = 200 // a "day" of 200 steps; busy 20% of it
	busyA := func(t int) bool { return t%100 < 20 }
	busyB := func(t int) bool { return t%100 >= 50 && t%100 < 70 }
	spikes := func(busy func(int) bool, hi, lo float64) func(int) float64 {
		return func(t int) float64 {
			if busy(t) {
				return hi
			}
			return lo
		}
	}
	// L4: 24 GB. With a 20% margin tenants may use 20 GB at one step.
	// Load: 0.7 when busy, 0.05 otherwise, so each alone has p95 0.7 and
	// two of them sum to 1.4 where busy steps meet, more than the 0.8
	// target at 20% of steps (the budget is 5%); where they alternate the
	// sum is at most 0.75.
	// Memory: 12 GiB when busy, 2 GiB otherwise: 24 GiB > 20 GB where
	// they meet, 14 GiB where they alternate.
	cases := []struct {
		name    string
		a, b    *Lane
		oneGPU  bool
		because string
	}{
		{"load takes turns", series("a", steps, constant(2), spikes(busyA, 0.7, 0.05)), series("b", steps, constant(2), spikes(busyB, 0.7, 0.05)),
			true, "summed load at most 0.75"},
		{"load peaks coincide", series("a", steps, constant(2), spikes(busyA, 0.7, 0.05)), series("b", steps, constant(2), spikes(busyA, 0.7, 0.05)),
			false, "summed load 1.4 at 20% of steps"},
		{"memory takes turns", series("a", steps, spikes(busyA, 12, 2), constant(0.1)), series("b", steps, spikes(busyB, 12, 2), constant(0.1)),
			true, "14 GiB at most"},
		{"memory peaks coincide", series("a", steps, spikes(busyA, 12, 2), constant(0.1)), series("b", steps, spikes(busyA, 12, 2), constant(0.1)),
			false, "24 GiB at 20% of steps"},
		{"jobs run one after the other", series("a", steps, during(0, 90, 18), during(0, 90, 0.95)), series("b", steps, during(100, 190, 18), during(100, 190, 0.95)),
			true, "never running at the same step, even at full load"},
		{"jobs overlap by one step", series("a", steps, during(0, 101, 18), during(0, 101, 0.95)), series("b", steps, during(100, 190, 18), during(100, 190, 0.95)),
			false, "36 GiB at step 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pp := planOf(t, DefaultPolicy(), poolOf(t, "L4", c.a, c.b))
			same := gpuOf(pp, c.a.Name()) == gpuOf(pp, c.b.Name())
			if same != c.oneGPU {
				t.Errorf("one GPU = %v, want %v (%s); plan: %+v", same, c.oneGPU, c.because, pp.GPUs)
			}
			if want := map[bool]int{true: 1, false: 2}[c.oneGPU]; pp.GPUsNeeded != want {
				t.Errorf("%d GPUs needed, want %d", pp.GPUsNeeded, want)
			}
			if pp.Replay.OvercommittedSteps != 0 {
				t.Errorf("replay: %d overcommitted steps", pp.Replay.OvercommittedSteps)
			}
		})
	}
}

func TestTrainingNeverTimeSliced(t *testing.T) {
	// Two light trainers that would fit one time-sliced L4 by memory and
	// load: training-like lanes get a GPU each (L4 has no MIG).
	a := series("train-a", 50, constant(4), constant(0.35))
	b := series("train-b", 50, constant(4), constant(0.35))
	a.Training, b.Training = true, true
	pp := planOf(t, DefaultPolicy(), poolOf(t, "L4", a, b))
	for _, as := range pp.Assignments {
		if as.Mode == ModeTimeSlicing {
			t.Errorf("%s time-sliced", as.Lane)
		}
	}
	if pp.GPUsNeeded != 2 {
		t.Errorf("%d GPUs, want 2", pp.GPUsNeeded)
	}
	// On an A100 three light trainers get MIG slices instead: 0.2/0.8 of
	// seven sevenths is 1.75, so 2g.20gb each (4 GiB × 1.2 fits 20 GB),
	// and three of them (6 sevenths, 6 eighths) share one GPU.
	var trainers []*Lane
	for i := range 3 {
		l := series(fmt.Sprint("train-", i), 50, constant(4), constant(0.2))
		l.Training = true
		trainers = append(trainers, l)
	}
	pp = planOf(t, DefaultPolicy(), poolOf(t, "A100-80GB", trainers...))
	if pp.GPUsNeeded != 1 {
		t.Errorf("%d GPUs, want 1", pp.GPUsNeeded)
	}
	for _, as := range pp.Assignments {
		if as.Mode != ModeMIG || as.Slice != "2g.20gb" {
			t.Errorf("%s: %s %s, want mig 2g.20gb", as.Lane, as.Mode, as.Slice)
		}
	}
}

func TestReplicaLimit(t *testing.T) {
	var lanes []*Lane
	for i := range 10 {
		lanes = append(lanes, series(fmt.Sprint("tiny-", i), 20, constant(0.5), constant(0.01)))
	}
	pol := DefaultPolicy()
	pol.MaxReplicas = 4
	pp := planOf(t, pol, poolOf(t, "L4", lanes...))
	// 10 lanes that fit any GPU by memory and load, 4 to a GPU: 3 GPUs.
	if pp.GPUsNeeded != 3 {
		t.Errorf("%d GPUs, want 3", pp.GPUsNeeded)
	}
	for _, g := range pp.GPUs {
		if len(g.Lanes) > 4 {
			t.Errorf("GPU %d has %d replicas", g.Index, len(g.Lanes))
		}
	}
}

// TestReplayCountsOvercommit gives replay a layout the packer would never
// make: it must be able to fail.
func TestReplayCountsOvercommit(t *testing.T) {
	a := series("a", 30, during(0, 20, 14), constant(0.6))
	b := series("b", 30, during(10, 30, 14), constant(0.6))
	pool := poolOf(t, "L4", a, b)
	pp := PoolPlan{GPUs: []GPU{{Index: 0, Mode: ModeTimeSlicing, Replicas: 2}},
		Assignments: []Assignment{{Lane: "Deployment/ns/a", GPU: 0}, {Lane: "Deployment/ns/b", GPU: 0}}}
	r := replay(pool, pp)
	// 28 GiB > 24 GB at steps 10..19; load 1.2 > 1 at every step.
	if r.OvercommittedSteps != 10 || r.GPUs[0].ContendedSteps != 30 {
		t.Errorf("overcommitted %d, contended %d; want 10 and 30", r.OvercommittedSteps, r.GPUs[0].ContendedSteps)
	}
}

// bruteForce is the test's own optimum: every partition of the lanes
// into groups, each group checked against the rules as the issue states
// them, written again here from the rules rather than from the planner.
func bruteForce(pool *Pool, pol Policy) int {
	n := len(pool.Lanes)
	steps := len(pool.Lanes[0].Mem)
	capBytes := pool.CapacityBytes
	p95 := func(v []float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		r := 0.95 * float64(len(s)-1)
		lo := int(math.Floor(r))
		if lo == len(s)-1 {
			return s[lo]
		}
		return s[lo] + (s[lo+1]-s[lo])*(r-float64(lo))
	}
	runs := func(l *Lane, t int) bool { return l.Mem[t] != 0 || l.Load[t] != 0 }
	// The smallest slice (not 7g) whose memory holds the peak with the
	// margin and whose sevenths cover p95 load at the target.
	slice := func(l *Lane) (Profile, bool) {
		var mem, load []float64
		for t := 0; t < steps; t++ {
			if runs(l, t) {
				mem, load = append(mem, float64(l.Mem[t])), append(load, float64(l.Load[t]))
			}
		}
		need := slices.Max(mem) * (1 + pol.MemoryMargin)
		for _, pr := range pool.Model.MIG {
			if pr.ComputeSlices < 7 && pr.MemoryBytes >= need && float64(pr.ComputeSlices)/7 >= p95(load)/pol.ComputeTarget-1e-9 {
				return pr, true
			}
		}
		return Profile{}, false
	}
	fits := func(group []int) bool {
		turns := true
		for t := 0; t < steps && turns; t++ {
			k := 0
			for _, i := range group {
				if runs(pool.Lanes[i], t) {
					k++
				}
			}
			turns = k <= 1
		}
		if turns {
			return true
		}
		shared := len(group) <= pol.MaxReplicas
		over := 0
		for _, i := range group {
			shared = shared && !pool.Lanes[i].Training
		}
		for t := 0; t < steps && shared; t++ {
			var mem, load float64
			for _, i := range group {
				mem += float64(pool.Lanes[i].Mem[t])
				load += float64(pool.Lanes[i].Load[t])
			}
			if mem*(1+pol.MemoryMargin) > capBytes {
				shared = false
			}
			if load > pol.ComputeTarget {
				over++
			}
		}
		if shared && over <= int(float64(steps)*0.05) {
			return true
		}
		sevenths, eighths, count := 0, 0, map[string]int{}
		for _, i := range group {
			pr, ok := slice(pool.Lanes[i])
			if !ok {
				return false
			}
			sevenths, eighths = sevenths+pr.ComputeSlices, eighths+pr.MemorySlices
			if count[pr.Name]++; count[pr.Name] > pr.Instances {
				return false
			}
		}
		return len(group) > 0 && sevenths <= 7 && eighths <= 8
	}
	best := n
	var groups [][]int
	var rec func(i int)
	rec = func(i int) {
		if len(groups) >= best {
			return
		}
		if i == n {
			for _, g := range groups {
				if !fits(g) {
					return
				}
			}
			best = len(groups)
			return
		}
		for k := range groups {
			groups[k] = append(groups[k], i)
			rec(i + 1)
			groups[k] = groups[k][:len(groups[k])-1]
		}
		groups = append(groups, []int{i})
		rec(i + 1)
		groups = groups[:len(groups)-1]
	}
	rec(0)
	return best
}

// randomPool draws n lanes of the kinds a fleet has: steady services,
// daily peaks at different hours, jobs that come and go, notebooks, and
// the odd trainer.
func randomPool(t *testing.T, r *rand.Rand, product string, n, steps int) *Pool {
	m, _ := lookupModel(product)
	capGiB := m.MemoryBytes / gib
	var lanes []*Lane
	for i := range n {
		name := fmt.Sprint("w", i)
		mem := capGiB * (0.05 + 0.4*r.Float64())
		load := 0.05 + 0.5*r.Float64()
		var l *Lane
		switch r.IntN(4) {
		case 0:
			l = series(name, steps, constant(mem), constant(load))
		case 1:
			from := r.IntN(steps)
			width := steps/4 + r.IntN(steps/4)
			in := func(t int) bool { return (t-from+steps)%steps < width }
			l = series(name, steps, func(t int) float64 {
				if in(t) {
					return mem
				}
				return mem / 4
			}, func(t int) float64 {
				if in(t) {
					return load
				}
				return 0.02
			})
		case 2:
			from := r.IntN(steps / 2)
			to := from + steps/8 + r.IntN(steps/2)
			l = series(name, steps, during(from, to, mem), during(from, to, load))
		default:
			l = series(name, steps, constant(mem/2), constant(0.01))
		}
		l.Training = r.IntN(8) == 0
		lanes = append(lanes, l)
	}
	return poolOf(t, product, lanes...)
}

func TestAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 1))
	exactMatches, heuristicMatches, trials := 0, 0, 0
	for _, product := range []string{"L4", "A100-80GB", "H200-141GB"} {
		for trial := range 12 {
			n := 3 + trial%6 // 3..8 lanes
			pool := randomPool(t, r, product, n, 48)
			want := bruteForce(pool, DefaultPolicy())
			trials++

			got := planOf(t, DefaultPolicy(), pool)
			// Exact search is on for pools this small: it must be optimal.
			if got.GPUsNeeded != want {
				t.Errorf("%s trial %d (%d lanes): exact plan %d GPUs, brute force %d", product, trial, n, got.GPUsNeeded, want)
			} else {
				exactMatches++
			}

			noExact := DefaultPolicy()
			noExact.ExactMaxLanes = 0
			heur := planOf(t, noExact, pool)
			// The heuristic alone may miss by one GPU, not more.
			switch d := heur.GPUsNeeded - want; {
			case d < 0:
				t.Errorf("%s trial %d: heuristic %d GPUs beats brute force %d: the rules differ", product, trial, heur.GPUsNeeded, want)
			case d > 1:
				t.Errorf("%s trial %d: heuristic %d GPUs, brute force %d: more than one GPU off", product, trial, heur.GPUsNeeded, want)
			case d == 0:
				heuristicMatches++
			}
			for _, pp := range []PoolPlan{got, heur} {
				if pp.Replay.OvercommittedSteps != 0 {
					t.Errorf("%s trial %d: replay overcommitted %d steps", product, trial, pp.Replay.OvercommittedSteps)
				}
			}
		}
	}
	t.Logf("exact search optimal in %d of %d pools; first-fit-decreasing + local search alone optimal in %d, one GPU off in the rest", exactMatches, trials, heuristicMatches)
}

// TestMakeRefusesAPlanFailingReplay: a lane that used more memory than
// the pool's GPUs have (a product name that covers two memory sizes, and
// the smaller was measured) cannot be placed anywhere; Make must fail
// rather than print a plan whose replay overcommits.
func TestMakeRefusesAPlanFailingReplay(t *testing.T) {
	big := series("big", 10, constant(30), constant(0.5))
	pool := poolOf(t, "L4", big, series("small", 10, constant(2), constant(0.1)))
	_, err := Make(&Data{Pools: []*Pool{pool}, Steps: 10}, DefaultPolicy(), nil)
	if !errors.Is(err, ErrReplay) || !strings.Contains(err.Error(), "10 overcommitted memory steps") {
		t.Errorf("error %v, want ErrReplay with 10 overcommitted steps (30 GiB on a 24 GB GPU at each of 10 steps)", err)
	}
}

// TestPathsNeverShareAGPU: two light services that would time-slice one
// L4, and two batch jobs that take turns on one, need a GPU each when one
// of each pair gets its GPU through a DRA claim: the device plugin and the
// DRA driver do not hand out the same GPU.
func TestPathsNeverShareAGPU(t *testing.T) {
	for _, tt := range []struct {
		name       string
		a, b       *Lane
		same, dra2 int // GPUs with both on the device plugin, with b through DRA
	}{
		{"time-sliced", series("svc-a", 50, constant(4), constant(0.1)), series("svc-b", 50, constant(4), constant(0.1)), 1, 2},
		{"taking turns", series("job-a", 50, during(0, 25, 10), during(0, 25, 0.9)), series("job-b", 50, during(25, 50, 10), during(25, 50, 0.9)), 1, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if pp := planOf(t, DefaultPolicy(), poolOf(t, "L4", tt.a, tt.b)); pp.GPUsNeeded != tt.same {
				t.Errorf("both through the device plugin: %d GPUs, want %d", pp.GPUsNeeded, tt.same)
			}
			tt.b.AllocationPath, tt.b.Claims = vocab.AllocationPathDRA, []string{"ns/claim"}
			pp := planOf(t, DefaultPolicy(), poolOf(t, "L4", tt.a, tt.b))
			if pp.GPUsNeeded != tt.dra2 || gpuOf(pp, tt.a.Name()) == gpuOf(pp, tt.b.Name()) {
				t.Errorf("one through DRA: %d GPUs (%s on %d, %s on %d), want %d apart", pp.GPUsNeeded,
					tt.a.Name(), gpuOf(pp, tt.a.Name()), tt.b.Name(), gpuOf(pp, tt.b.Name()), tt.dra2)
			}
		})
	}
}
