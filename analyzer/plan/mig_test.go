package plan

import (
	"fmt"
	"testing"
)

// migPlacements are the memory-slice start positions of each profile of
// the A100/H100/H200 layout (`nvidia-smi mig -lgipp` on an A100-80GB),
// in the catalog's order: 1g (one eighth) anywhere but the last slice,
// 1g with two eighths on even slices, 2g on 0, 2 or 4, 3g on 0 or 4, 4g
// on 0. The planner only checks sums and instance counts; this test
// holds that every set it accepts can be placed.
var migPlacements = [][]int{{0, 1, 2, 3, 4, 5, 6}, {0, 2, 4, 6}, {0, 2, 4}, {0, 4}, {0}}

func placeable(pool *Pool, counts []int) bool {
	var items []int
	for p, n := range counts {
		for range n {
			items = append(items, p)
		}
	}
	var used [8]bool
	var place func(k int) bool
	place = func(k int) bool {
		if k == len(items) {
			return true
		}
		pr := pool.Model.MIG[items[k]]
		for _, start := range migPlacements[items[k]] {
			free := start+pr.MemorySlices <= 8
			for s := start; free && s < start+pr.MemorySlices; s++ {
				free = !used[s]
			}
			if !free {
				continue
			}
			for s := start; s < start+pr.MemorySlices; s++ {
				used[s] = true
			}
			if place(k + 1) {
				return true
			}
			for s := start; s < start+pr.MemorySlices; s++ {
				used[s] = false
			}
		}
		return false
	}
	return place(0)
}

func TestMIGSumsArePlaceable(t *testing.T) {
	for _, product := range []string{"A100-80GB", "A100-40GB", "H100-80GB", "H200-141GB"} {
		pool := poolOf(t, product, series("x", 1, constant(1), constant(0.1)))
		p := newPacker(pool, DefaultPolicy())
		accepted := 0
		// Every multiset of the sliceable profiles (7g excluded: it is a
		// whole GPU to the planner); the checks are sums, so one order of
		// adding them suffices.
		var counts [5]int
		var rec func(k int)
		rec = func(k int) {
			if k == len(counts) {
				b := p.newBin(ModeMIG)
				ok := true
				for prof, n := range counts {
					for range n {
						if ok = ok && p.fits(b, 0, prof); ok {
							p.add(b, 0, prof)
						}
					}
				}
				if !ok {
					return
				}
				accepted++
				if !placeable(pool, counts[:]) {
					t.Errorf("%s: the planner accepts %v, which no placement holds", product, fmt.Sprint(counts))
				}
				return
			}
			for n := 0; n <= pool.Model.MIG[k].Instances; n++ {
				counts[k] = n
				rec(k + 1)
			}
			counts[k] = 0
		}
		rec(0)
		if accepted < 20 {
			t.Errorf("%s: only %d geometries accepted", product, accepted)
		}
		t.Logf("%s: %d geometries accepted, all placeable", product, accepted)
	}
}

// TestFourSliceModelPlannedOnItsGeometry: an A30 has 4 compute and 4
// memory slices (internal/mig), so four lanes that each fit a 1g.6gb
// slice fill one GPU and a fifth needs another; a planner counting
// sevenths would put five on one.
func TestFourSliceModelPlannedOnItsGeometry(t *testing.T) {
	const steps = 96
	for _, tt := range []struct {
		lanes, gpus int
	}{{4, 1}, {5, 2}} {
		t.Run(fmt.Sprint(tt.lanes, " lanes"), func(t *testing.T) {
			var lanes []*Lane
			for i := range tt.lanes {
				// Training-like, so never time-sliced: only MIG or a
				// whole GPU can hold it.
				l := series(fmt.Sprintf("trainer-%d", i), steps, constant(4), constant(0.1))
				l.Training = true
				lanes = append(lanes, l)
			}
			pp := planOf(t, DefaultPolicy(), poolOf(t, "NVIDIA A30", lanes...))
			if pp.GPUsNeeded != tt.gpus {
				t.Fatalf("%d lanes on %d A30s, want %d: %+v", tt.lanes, pp.GPUsNeeded, tt.gpus, pp.Assignments)
			}
			perGPU := map[int]int{}
			for _, a := range pp.Assignments {
				switch {
				case a.Mode == ModeMIG && a.Slice == "1g.6gb":
					perGPU[a.GPU]++
				case a.Mode == ModeMIG, tt.gpus == 1:
					// One GPU's worth must be four slices; a lane left
					// over may take a GPU of its own.
					t.Errorf("%s on %s %q, want MIG 1g.6gb", a.Lane, a.Mode, a.Slice)
				}
			}
			for g, n := range perGPU {
				if n > 4 {
					t.Errorf("GPU %d holds %d 1g slices of an A30's 4", g, n)
				}
			}
		})
	}
}
