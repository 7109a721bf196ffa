// Package plan answers the fleet-wide question: if every workload got
// what it uses, and shared GPUs were packed sensibly, how many GPUs of
// each model would the fleet need, and which layout gets there?
//
// Files: lanes.go groups the allocations of an analysis, with the use at
// every step its passes folded (query.Sharding.Lanes: the plan reads no
// store of its own), into lanes and the GPUs into pools; growth.go
// projects a lane's memory growth; catalog.go is the one contact with recommend's MIG catalog
// and prices; bin.go is one planned GPU and its fit check; pack.go
// sizes lanes and runs first-fit-decreasing and the local search;
// exact.go solves small pools exactly; replay.go plays the window back on
// the layout; nodes.go packs the GPUs on nodes; today.go rebuilds today's
// layout, which a pool keeps where the packed one needs more nodes than
// it has; planner.go ties them together; output.go renders.
//
// The model. A lane is one replica of a workload over the window (the
// pods of a Job that runs nightly form one lane; a Deployment of three
// replicas has three). At every step a lane has the memory it used and
// its load on the GPU (share × utilization). A planned GPU is
//   - whole: one lane, or lanes that never run at the same step;
//   - MIG: one lane per slice, each on the smallest profile (not the
//     whole GPU's) whose memory holds the lane's peak with the margin and
//     whose compute slices give its p95 load room at the compute target;
//     the slices' compute and memory slices sum to at most the model's
//     totals (internal/mig), and no profile is used more often than the
//     model allows;
//   - time-sliced: up to MaxReplicas lanes, none training-like, whose
//     summed memory with the margin fits at every step and whose summed
//     load exceeds the compute target at no more than 5% of steps.
//
// Every lane of a workload takes the same kind of place, since they share
// one pod template and so one resource request. A lane whose memory
// grows in its last run (a leak) has the growth projected over one more
// window reserved at every step it runs, up to a whole GPU.
//
// The search. For each of three strategies (time-slicing first, MIG first,
// the smaller share), lanes are sized, sorted by (p99 memory, p95 load)
// decreasing, and placed first-fit; a local search then tries to empty
// the least filled GPUs into the others. The fewest GPUs win. Pools of at
// most ExactMaxLanes (10) lanes are also solved exactly by dynamic
// programming over subsets, and the exact answer is kept when it is as
// good and every workload's lanes share one kind of place.
//
// Complexity, for n lanes, g planned GPUs and T steps: sizing O(n·T log T)
// (quantiles); first-fit O(n·g·T/64) block checks plus the steps of the
// blocks where the extremes do not decide (blocks of 64 steps keep each
// series' minimum and maximum, so most fits are settled without looking at
// a step); local search at most 3 passes of 64 GPUs × their lanes × g fit
// checks; exact search O(2^n·n·T + 3^n) for n ≤ 10; replay O(n·T).
// Memory is O(n·T) for the lanes and O(g·T) for the time-sliced GPUs'
// per-step sums. docs/BENCHMARKS.md has the measured figures.
package plan
