package plan

// bin is one planned GPU while the planner fills it. A time-sliced bin
// keeps the per-step sums of its lanes' planned memory and load, so a
// fit check is one pass over the steps and stops at the first step that
// does not fit; a MIG bin keeps its slices' compute and memory slices,
// against the model's own totals (internal/mig: 7 and 8 on A100 and
// Hopper, 4 and 4 on A30 and RTX PRO 6000).
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
	blocks          blockSummary
	// MIG
	profiles                    []int // per lane, index into Model.MIG
	computeSlices, memorySlices int
	counts                      []int
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
	// A GPU is handed out by the device plugin or by the DRA driver, never
	// both: the driver's GPUs are not advertised as extended resources, and
	// the device plugin's are not in the driver's ResourceSlice.
	if len(b.lanes) > 0 && l.path() != p.pool.Lanes[b.lanes[0]].path() {
		return false
	}
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
		return b.counts[prof] < pr.Instances && b.computeSlices+pr.ComputeSlices <= pr.GPUComputeSlices &&
			b.memorySlices+pr.MemorySlices <= pr.GPUMemorySlices
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
	lb := &l.stats.blocks
	// First a pass over the blocks alone: a block where even the smallest
	// memories do not fit rejects at once, and one where even the smallest
	// loads pass the target adds all its steps not yet over to the count.
	for k := range b.blocks.memMax {
		if b.blocks.memMin[k]+lb.memMin[k] > p.memLimit {
			return false
		}
		if checkLoad && b.blocks.loadMin[k]+lb.loadMin[k] > target {
			if over += b.blocks.steps[k] - b.blocks.over[k]; over > p.overBudget {
				return false
			}
		}
	}
	// Then the steps of the blocks where the largest values do not fit.
	for k := range b.blocks.memMax {
		scanMem := checkMem && b.blocks.memMax[k]+lb.memMax[k] > p.memLimit
		scanLoad := checkLoad && b.blocks.loadMax[k]+lb.loadMax[k] > target && b.blocks.loadMin[k]+lb.loadMin[k] <= target
		if !scanMem && !scanLoad {
			continue
		}
		for t := k * blockSteps; t < min(p.steps, (k+1)*blockSteps); t++ {
			if scanMem && b.sumMem[t]+l.stats.mem[t] > p.memLimit {
				return false
			}
			if scanLoad && b.sumLoad[t]+l.Load[t] > target && b.sumLoad[t] <= target {
				if over++; over > p.overBudget {
					return false
				}
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
		b.computeSlices += pr.ComputeSlices
		b.memorySlices += pr.MemorySlices
	case ModeTimeSlicing:
		l := p.pool.Lanes[i]
		target := float32(p.pol.ComputeTarget)
		for t := 0; t < p.steps; t++ {
			before := b.sumLoad[t]
			b.sumMem[t] += l.stats.mem[t]
			b.sumLoad[t] += l.Load[t]
			b.peakMem = max(b.peakMem, b.sumMem[t])
			b.peakLoad = max(b.peakLoad, b.sumLoad[t])
			if before <= target && b.sumLoad[t] > target {
				b.overTarget++
			}
		}
		b.blocks = summarize(b.sumMem, b.sumLoad, float32(p.pol.ComputeTarget), b.blocks)
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
		b.computeSlices -= pr.ComputeSlices
		b.memorySlices -= pr.MemorySlices
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
			b.sumMem[t] += l.stats.mem[t]
			b.sumLoad[t] += l.Load[t]
		}
	}
	b.blocks = summarize(b.sumMem, b.sumLoad, float32(p.pol.ComputeTarget), b.blocks)
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

// blockSteps is the length of the blocks whose extremes let a fit check
// skip most steps: a fit of two series is certain in a block where their
// maxima fit, impossible where their minima do not.
const blockSteps = 64

type blockSummary struct {
	memMax, memMin, loadMax, loadMin []float32
	// steps is each block's length; over its steps whose load exceeds
	// the target (bins only).
	steps, over []int
}

// summarize fills s (reusing its slices) with mem's and load's extremes
// per block, and the steps whose load exceeds target.
func summarize(mem, load []float32, target float32, s blockSummary) blockSummary {
	n := (len(mem) + blockSteps - 1) / blockSteps
	if len(s.memMax) != n {
		s = blockSummary{memMax: make([]float32, n), memMin: make([]float32, n), loadMax: make([]float32, n),
			loadMin: make([]float32, n), steps: make([]int, n), over: make([]int, n)}
	}
	for k := 0; k < n; k++ {
		start, end := k*blockSteps, min(len(mem), (k+1)*blockSteps)
		mx, mn, lx, ln, over := mem[start], mem[start], load[start], load[start], 0
		for t := start; t < end; t++ {
			mx, mn, lx, ln = max(mx, mem[t]), min(mn, mem[t]), max(lx, load[t]), min(ln, load[t])
			if load[t] > target {
				over++
			}
		}
		s.memMax[k], s.memMin[k], s.loadMax[k], s.loadMin[k], s.steps[k], s.over[k] = mx, mn, lx, ln, end-start, over
	}
	return s
}

// computeShare is the fraction of the GPU's compute a MIG bin's slices
// hold.
func (b *bin) computeShare(m Model) float64 {
	if len(m.MIG) == 0 {
		return 0
	}
	return float64(b.computeSlices) / float64(m.MIG[0].GPUComputeSlices)
}
