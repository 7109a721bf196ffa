package plan

import (
	"fmt"
	"slices"
)

// Replay is the measured window played back on a pool's layout: every
// lane's memory and load at every step, on the GPU or slice the plan gave
// it, with no margin and no projected growth. It shares no code with the
// packer's fit checks, so a packer bug shows here as overcommitted steps.
type Replay struct {
	Steps int `json:"steps"`
	// OvercommittedSteps counts (GPU or slice, step) pairs whose memory in
	// use exceeded the capacity: a plan is only printed when it is 0.
	OvercommittedSteps int         `json:"overcommitted_steps"`
	GPUs               []GPUReplay `json:"gpus"`
}

// GPUReplay is one planned GPU's replay.
type GPUReplay struct {
	GPU  int  `json:"gpu"`
	Mode Mode `json:"mode"`
	// PeakMemoryRatio is the highest memory in use over its capacity at
	// one step: of the GPU when shared or whole, of the fullest slice on
	// MIG.
	PeakMemoryRatio    float64 `json:"peak_memory_ratio"`
	OvercommittedSteps int     `json:"overcommitted_steps"`
	// ContendedSteps are the steps at which the tenants' summed load
	// exceeded the whole GPU (time-slicing), or a lane's load exceeded its
	// slice (MIG): they would have run slower than measured.
	ContendedSteps int     `json:"contended_steps"`
	PeakLoad       float64 `json:"peak_load"`
}

func replay(pool *Pool, pp PoolPlan) Replay {
	lanes := map[string]*Lane{}
	steps := 0
	for _, l := range pool.Lanes {
		lanes[l.Name()] = l
		steps = len(l.Mem)
	}
	r := Replay{Steps: steps}
	byGPU := map[int][]Assignment{}
	for _, a := range pp.Assignments {
		byGPU[a.GPU] = append(byGPU[a.GPU], a)
	}
	for _, g := range pp.GPUs {
		gr := GPUReplay{GPU: g.Index, Mode: g.Mode}
		as := byGPU[g.Index]
		ls := make([]*Lane, len(as))
		prs := make([]Profile, len(as))
		for k, a := range as {
			ls[k] = lanes[a.Lane]
			prs[k], _ = profileNamed(pool, a.Slice)
		}
		for t := 0; t < steps; t++ {
			over, contended := false, false
			if g.Mode == ModeMIG {
				for k := range as {
					l, pr := ls[k], prs[k]
					mem, load := float64(l.Mem[t]), float64(l.Load[t])
					gr.PeakMemoryRatio = max(gr.PeakMemoryRatio, mem/pr.MemoryBytes)
					gr.PeakLoad = max(gr.PeakLoad, load)
					over = over || mem > pr.MemoryBytes
					contended = contended || load > pr.ComputeShare()+1e-9
				}
			} else {
				var mem, load float64
				for _, l := range ls {
					mem += float64(l.Mem[t])
					load += float64(l.Load[t])
				}
				gr.PeakMemoryRatio = max(gr.PeakMemoryRatio, mem/pool.CapacityBytes)
				gr.PeakLoad = max(gr.PeakLoad, load)
				over = mem > pool.CapacityBytes
				contended = load > 1+1e-9
			}
			if over {
				gr.OvercommittedSteps++
			}
			if contended {
				gr.ContendedSteps++
			}
		}
		r.OvercommittedSteps += gr.OvercommittedSteps
		r.GPUs = append(r.GPUs, gr)
	}
	return r
}

// ContendedGPUs counts the shared GPUs with any contended step.
func (r Replay) ContendedGPUs() int {
	n := 0
	for _, g := range r.GPUs {
		if g.ContendedSteps > 0 {
			n++
		}
	}
	return n
}

// worst names the GPU with the most overcommitted steps, for errors.
func (r Replay) worst() string {
	if len(r.GPUs) == 0 {
		return "no GPUs"
	}
	g := slices.MaxFunc(r.GPUs, func(a, b GPUReplay) int { return a.OvercommittedSteps - b.OvercommittedSteps })
	return fmt.Sprintf("GPU %d (%s): %d steps, peak %.0f%% of its memory", g.GPU, g.Mode, g.OvercommittedSteps, 100*g.PeakMemoryRatio)
}
