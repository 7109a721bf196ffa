package plan

// bin is one planned GPU while the planner fills it. A time-sliced bin
// keeps the per-step sums of its lanes' planned memory and load, so a
// fit check is one pass over the steps and stops at the first step that
// does not fit; a MIG bin keeps the slices' sevenths and eighths.
type bin struct {
	mode  Mode
	lanes []int
	// whole: the steps at which a lane runs; lanes that never run at the
	// same step (jobs that take turns) can hold one GPU one after another.
	busy []uint64
	// time-slicing
	sumMem, sumLoad []float32
	peakMem         float32
	peakLoad        float32
	overTarget      int // steps whose summed load exceeds ComputeTarget
	// MIG
	profiles          []int // per lane, index into Model.MIG
	sevenths, eighths int
	counts            []int
}

// packer holds what every fit check of a pool needs.
type packer struct {
	pool  *Pool
	pol   Policy
	steps int
	// memLimit is the memory a shared GPU's tenants may use at one step:
	// the capacity less the margin.
	memLimit float32
	// overBudget is how many steps a shared GPU's load may exceed
	// ComputeTarget: what the 95th percentile leaves.
	overBudget int
}

func newPacker(pool *Pool, pol Policy) *packer {
	steps := 0
	if len(pool.Lanes) > 0 {
		steps = len(pool.Lanes[0].Mem)
	}
	return &packer{pool: pool, pol: pol, steps: steps,
		memLimit:   float32(pool.CapacityBytes / (1 + pol.MemoryMargin)),
		overBudget: int(float64(steps) * (1 - loadQuantile))}
}

func (p *packer) newBin(mode Mode) *bin {
	b := &bin{mode: mode}
	switch mode {
	case ModeWhole:
		b.busy = make([]uint64, (p.steps+63)/64)
	case ModeTimeSlicing:
		b.sumMem, b.sumLoad = make([]float32, p.steps), make([]float32, p.steps)
	case ModeMIG:
		b.counts = make([]int, len(p.pool.Model.MIG))
	}
	return b
}

// fits says whether lane i (with MIG profile prof on a MIG bin) can join b.
func (p *packer) fits(b *bin, i, prof int) bool {
	l := p.pool.Lanes[i]
	switch b.mode {
	case ModeWhole:
		for k, w := range l.stats.run {
			if b.busy[k]&w != 0 {
				return false
			}
		}
		return true
	case ModeMIG:
		pr := p.pool.Model.MIG[prof]
		return b.counts[prof] < pr.Instances && b.sevenths+pr.ComputeSevenths <= 7 && b.eighths+pr.MemoryEighths <= 8
	}
	if len(b.lanes) >= p.pol.MaxReplicas || l.Training {
		return false
	}
	checkMem := float64(b.peakMem)+l.stats.peakMem > float64(p.memLimit)
	checkLoad := float64(b.peakLoad)+l.stats.peakLoad > p.pol.ComputeTarget
	if !checkMem && !checkLoad {
		return true
	}
	target := float32(p.pol.ComputeTarget)
	over := b.overTarget
	for t := 0; t < p.steps; t++ {
		if checkMem && b.sumMem[t]+l.plannedMem(t) > p.memLimit {
			return false
		}
		if checkLoad && b.sumLoad[t]+l.Load[t] > target && b.sumLoad[t] <= target {
			if over++; over > p.overBudget {
				return false
			}
		}
	}
	return true
}

func (p *packer) add(b *bin, i, prof int) {
	b.lanes = append(b.lanes, i)
	switch b.mode {
	case ModeWhole:
		for k, w := range p.pool.Lanes[i].stats.run {
			b.busy[k] |= w
		}
	case ModeMIG:
		pr := p.pool.Model.MIG[prof]
		b.profiles = append(b.profiles, prof)
		b.counts[prof]++
		b.sevenths += pr.ComputeSevenths
		b.eighths += pr.MemoryEighths
	case ModeTimeSlicing:
		l := p.pool.Lanes[i]
		target := float32(p.pol.ComputeTarget)
		for t := 0; t < p.steps; t++ {
			before := b.sumLoad[t]
			b.sumMem[t] += l.plannedMem(t)
			b.sumLoad[t] += l.Load[t]
			b.peakMem = max(b.peakMem, b.sumMem[t])
			b.peakLoad = max(b.peakLoad, b.sumLoad[t])
			if before <= target && b.sumLoad[t] > target {
				b.overTarget++
			}
		}
	}
}

// remove takes the lane at position k out of b.
func (p *packer) remove(b *bin, k int) {
	b.lanes = append(b.lanes[:k:k], b.lanes[k+1:]...)
	switch b.mode {
	case ModeWhole:
		clear(b.busy)
		for _, i := range b.lanes {
			for k, w := range p.pool.Lanes[i].stats.run {
				b.busy[k] |= w
			}
		}
	case ModeMIG:
		pr := p.pool.Model.MIG[b.profiles[k]]
		b.counts[b.profiles[k]]--
		b.sevenths -= pr.ComputeSevenths
		b.eighths -= pr.MemoryEighths
		b.profiles = append(b.profiles[:k:k], b.profiles[k+1:]...)
	case ModeTimeSlicing:
		p.recompute(b)
	}
}

// recompute rebuilds a time-sliced bin's sums from its lanes after one
// left: subtracting float32s would drift, and a bin holds at most
// MaxReplicas lanes.
func (p *packer) recompute(b *bin) {
	clear(b.sumMem)
	clear(b.sumLoad)
	for _, i := range b.lanes {
		l := p.pool.Lanes[i]
		for t := 0; t < p.steps; t++ {
			b.sumMem[t] += l.plannedMem(t)
			b.sumLoad[t] += l.Load[t]
		}
	}
	b.peakMem, b.peakLoad, b.overTarget = 0, 0, 0
	target := float32(p.pol.ComputeTarget)
	for t := 0; t < p.steps; t++ {
		b.peakMem = max(b.peakMem, b.sumMem[t])
		b.peakLoad = max(b.peakLoad, b.sumLoad[t])
		if b.sumLoad[t] > target {
			b.overTarget++
		}
	}
}
