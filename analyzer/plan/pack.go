package plan

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/gpulens/gpulens/analyzer/workload"
)

// place is where a lane can go: a mode, and the MIG profile on MIG.
type place struct {
	mode    Mode
	profile int
}

// options are the places a workload's lanes could take: the smallest MIG
// slice that holds each of them (-1: none), and whether a time-sliced
// replica can.
type options struct {
	mig int
	ts  bool
}

// laneOptions sizes one lane. A slice must hold the lane's planned peak
// with the margin, and give it compute for its p95 load at ComputeTarget;
// the whole-GPU profile (7g, 4g on a 4-slice model) is not a slice here. A time-sliced replica
// needs the lane not to be training-like and to fit a GPU alone.
func (p *packer) laneOptions(l *Lane) options {
	o := options{mig: -1}
	need := l.stats.peakMem * (1 + p.pol.MemoryMargin)
	for i, pr := range p.pool.Model.MIG {
		slices := max(1, int(math.Ceil(float64(pr.GPUComputeSlices)*l.stats.p95Load/p.pol.ComputeTarget-1e-9)))
		if !pr.Whole() && pr.MemoryBytes >= need && pr.ComputeSlices >= slices {
			o.mig = i
			break
		}
	}
	o.ts = !p.pol.NoTimeSlicing && !l.Training && need <= p.pool.CapacityBytes && l.stats.p95Load <= p.pol.ComputeTarget
	return o
}

// strategy picks a workload's place from its options. Every lane of a
// workload takes the same kind of place, since they share one pod
// template and so one resource request.
type strategy struct {
	name string
	pick func(p *packer, o options, lanes []*Lane) place
}

func timeSlicingFirst(_ *packer, o options, _ []*Lane) place {
	switch {
	case o.ts:
		return place{ModeTimeSlicing, -1}
	case o.mig >= 0:
		return place{ModeMIG, o.mig}
	}
	return place{ModeWhole, -1}
}

var strategies = []strategy{
	{"time-slicing first", timeSlicingFirst},
	{"MIG first", func(_ *packer, o options, _ []*Lane) place {
		switch {
		case o.mig >= 0:
			return place{ModeMIG, o.mig}
		case o.ts:
			return place{ModeTimeSlicing, -1}
		}
		return place{ModeWhole, -1}
	}},
	{"smaller share", func(p *packer, o options, lanes []*Lane) place {
		// A slice's share is fixed; a replica's is estimated from its
		// peak memory and its p95 load, at least one of MaxReplicas.
		if o.mig >= 0 && o.ts {
			pr := p.pool.Model.MIG[o.mig]
			slice := max(pr.ComputeShare(), pr.MemoryShare())
			replica := 1 / float64(p.pol.MaxReplicas)
			for _, l := range lanes {
				replica = max(replica, l.stats.p99Mem*(1+p.pol.MemoryMargin)/p.pool.CapacityBytes, l.stats.p95Load/p.pol.ComputeTarget)
			}
			if slice < replica {
				return place{ModeMIG, o.mig}
			}
			return place{ModeTimeSlicing, -1}
		}
		return timeSlicingFirst(p, o, lanes)
	}},
}

// places decides every lane's place under s.
func (p *packer) places(s strategy) []place {
	byWorkload := map[workload.Ref][]int{}
	for i, l := range p.pool.Lanes {
		byWorkload[l.Workload] = append(byWorkload[l.Workload], i)
	}
	out := make([]place, len(p.pool.Lanes))
	for _, idx := range byWorkload {
		o := options{mig: -1, ts: true}
		var lanes []*Lane
		for k, i := range idx {
			lo := p.laneOptions(p.pool.Lanes[i])
			lanes = append(lanes, p.pool.Lanes[i])
			o.ts = o.ts && lo.ts
			if k == 0 || o.mig >= 0 {
				if lo.mig < 0 {
					o.mig = -1
				} else {
					o.mig = max(o.mig, lo.mig)
				}
			}
		}
		pl := s.pick(p, o, lanes)
		for _, i := range idx {
			out[i] = pl
		}
	}
	return out
}

// order is first-fit-decreasing's order: the largest of (p99 memory as a
// part of the GPU, p95 load) first, then by name so that plans do not
// depend on map order.
func (p *packer) order() []int {
	idx := make([]int, len(p.pool.Lanes))
	for i := range idx {
		idx[i] = i
	}
	size := func(l *Lane) float64 { return max(l.stats.p99Mem/p.pool.CapacityBytes, l.stats.p95Load) }
	slices.SortStableFunc(idx, func(a, b int) int {
		la, lb := p.pool.Lanes[a], p.pool.Lanes[b]
		return cmp.Or(cmp.Compare(size(lb), size(la)), cmp.Compare(lb.stats.p99Mem, la.stats.p99Mem), cmp.Compare(la.Name(), lb.Name()))
	})
	return idx
}

// firstFitDecreasing places each lane, largest first, on the first open
// GPU of its mode it fits, or on a new one.
func (p *packer) firstFitDecreasing(pl []place) []*bin {
	var bins []*bin
	for _, i := range p.order() {
		placed := false
		for _, b := range bins {
			if b.mode == pl[i].mode && p.fits(b, i, pl[i].profile) {
				p.add(b, i, pl[i].profile)
				placed = true
				break
			}
		}
		if !placed {
			b := p.newBin(pl[i].mode)
			p.add(b, i, pl[i].profile)
			bins = append(bins, b)
		}
	}
	return bins
}

// localSearch tries to empty GPUs, least filled first, by moving each of
// their lanes to another GPU of the same mode (closed ones included); a
// GPU that cannot be emptied keeps its lanes. It repeats while a pass
// frees a GPU, at most maxPasses times.
func (p *packer) localSearch(bins []*bin, pl []place) []*bin {
	// The least filled GPUs are the ones worth emptying; trying only
	// maxTries of them a pass keeps a pass at O(maxTries · lanes per GPU ·
	// GPUs) fit checks.
	const maxPasses, maxTries = 3, 64
	fill := func(b *bin) float64 {
		switch b.mode {
		case ModeMIG:
			return b.computeShare(p.pool.Model)
		case ModeTimeSlicing:
			return float64(b.peakMem) / float64(p.memLimit)
		}
		busy := 0
		for _, w := range b.busy {
			busy += bits.OnesCount64(w)
		}
		return float64(busy) / float64(max(1, p.steps))
	}
	for pass := 0; pass < maxPasses; pass++ {
		slices.SortStableFunc(bins, func(a, b *bin) int { return cmp.Compare(fill(a), fill(b)) })
		freed := false
		for k := 0; k < min(len(bins), maxTries); k++ {
			src := bins[k]
			if len(src.lanes) == 0 {
				continue
			}
			type move struct{ lane, to int }
			var moves []move
			ok := true
			for _, i := range slices.Clone(src.lanes) {
				done := false
				for j, dst := range bins {
					if j == k || dst.mode != src.mode || len(dst.lanes) == 0 {
						continue
					}
					if p.fits(dst, i, pl[i].profile) {
						p.add(dst, i, pl[i].profile)
						moves = append(moves, move{i, j})
						done = true
						break
					}
				}
				if !done {
					ok = false
					break
				}
			}
			if !ok {
				// Undo, last move first.
				for m := len(moves) - 1; m >= 0; m-- {
					dst := bins[moves[m].to]
					p.remove(dst, slices.Index(dst.lanes, moves[m].lane))
				}
				continue
			}
			*src = *p.newBin(src.mode)
			freed = true
		}
		bins = slices.DeleteFunc(bins, func(b *bin) bool { return len(b.lanes) == 0 })
		if !freed {
			break
		}
	}
	return bins
}
