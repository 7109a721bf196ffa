package plan

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// Plan is the layout of every pool, proven by its replay.
type Plan struct {
	Start  time.Time     `json:"start"`
	End    time.Time     `json:"end"`
	Step   time.Duration `json:"-"`
	StepS  float64       `json:"step_seconds"`
	Policy Policy        `json:"policy"`
	// Clusters are the clusters planned, each apart, where the store
	// holds several (MergeClusters); nil for one cluster's store.
	Clusters []string   `json:"clusters,omitempty"`
	Pools    []PoolPlan `json:"pools"`
	// The totals add the pools up; the saving counts priced pools only.
	// The saving is in nodes, as clouds bill: the freed nodes' price (less
	// the added nodes' where a layout needs more). GPUs freed on nodes that
	// stay are headroom, worth nothing until a node goes.
	GPUsToday        int     `json:"gpus_today"`
	GPUsNeeded       int     `json:"gpus_needed"`
	NodesToday       int     `json:"nodes_today"`
	NodesNeeded      int     `json:"nodes_needed"`
	HeadroomGPUs     int     `json:"headroom_gpus"`
	MonthlySavingUSD float64 `json:"monthly_saving_usd"`
	// CapacityFreedGPUs are the GPUs the plan frees on the nodes that
	// stay, and CapacityFreedMonthlyUSD their price a month (priced pools
	// only): capacity for other work, which leaves the bill only when a
	// node goes, so it is never added to MonthlySavingUSD.
	CapacityFreedGPUs       int     `json:"capacity_freed_gpus"`
	CapacityFreedMonthlyUSD float64 `json:"capacity_freed_monthly_usd"`
	// AsIs says the plan packs today's fleet (--as-is); without it the
	// plan is of the fleet after the advice, less the lanes Released
	// names (ApplyAdvice).
	AsIs     bool     `json:"as_is"`
	Released []string `json:"released,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

// PoolPlan is one model's layout.
type PoolPlan struct {
	// Cluster is the cluster whose nodes the pool is, where the plan is
	// of several (Plan.Clusters).
	Cluster    string `json:"cluster,omitempty"`
	Model      string `json:"model"`
	Product    string `json:"product"`
	GPUsToday  int    `json:"gpus_today"`
	GPUsNeeded int    `json:"gpus_needed"`
	// Method says how the layout was found: exactly, or by which
	// first-fit-decreasing strategy and the local search.
	Method       string   `json:"method"`
	PricePerHour *float64 `json:"price_per_gpu_hour"`
	// PricePerNodeHour is a node's: its GPUs at PricePerHour. PriceSource
	// says where PricePerHour comes from (the table's file and date, and a
	// discount).
	PricePerNodeHour *float64 `json:"price_per_node_hour"`
	PriceSource      string   `json:"price_source,omitempty"`
	// InstanceType is the pool's nodes' instance type, when known.
	InstanceType string `json:"instance_type,omitempty"`
	// MonthlySavingUSD is the freed nodes' price a month (negative when
	// the layout needs more nodes); nil without a price.
	MonthlySavingUSD *float64 `json:"monthly_saving_usd"`
	// CapacityFreedGPUs and CapacityFreedMonthlyUSD are as Plan's, of
	// the pool; the value is nil without a price.
	CapacityFreedGPUs       int      `json:"capacity_freed_gpus"`
	CapacityFreedMonthlyUSD *float64 `json:"capacity_freed_monthly_usd"`
	// GPUsPerNode is the pool's node shape; NodesToday and NodesNeeded
	// count nodes (0: unknown). A node takes one device plugin config, so
	// time-sliced GPUs need nodes of their own, and a pool frees money in
	// the cloud only by whole nodes. HeadroomGPUs are the planned nodes'
	// GPUs that the layout leaves free.
	GPUsPerNode  int          `json:"gpus_per_node,omitempty"`
	NodesToday   int          `json:"nodes_today,omitempty"`
	NodesNeeded  int          `json:"nodes_needed,omitempty"`
	HeadroomGPUs int          `json:"headroom_gpus"`
	Nodes        []Node       `json:"nodes,omitempty"`
	GPUs         []GPU        `json:"gpus"`
	Assignments  []Assignment `json:"assignments"`
	Replay       Replay       `json:"replay"`
	// KeepsToday says the pool keeps today's layout (today.go): the
	// packed layout needed more nodes than the pool has, and today's
	// holds every lane on the nodes it has. Nothing is rolled out but the
	// requests of the lanes it moves (Assignment.Moved).
	KeepsToday bool `json:"keeps_today,omitempty"`
	// DidNotFit are the lanes that today's layout cannot hold, where the
	// layout needs more nodes than the pool has: the reason it does. Such
	// a pool saves nothing (its saving is the added nodes' price, negative).
	DidNotFit []Unfit  `json:"did_not_fit,omitempty"`
	Notes     []string `json:"notes,omitempty"`
}

// Freed is how many GPUs the layout gives back; negative when the pool
// needs more than it has.
func (p PoolPlan) Freed() int { return p.GPUsToday - p.GPUsNeeded }

// GPU is one planned GPU.
type GPU struct {
	Index int  `json:"index"`
	Mode  Mode `json:"mode"`
	// UUID is the GPU's where the pool keeps today's layout.
	UUID string `json:"uuid,omitempty"`
	// Replicas is the time-slicing replica count (in today's layout, its
	// tenants: the device plugin may offer more); Slices the MIG
	// geometry, one profile per slice.
	Replicas int      `json:"replicas,omitempty"`
	Slices   []string `json:"slices,omitempty"`
	Lanes    []string `json:"lanes"`
	// DRALanes are the lanes whose pods get the GPU through a DRA
	// ResourceClaim: the node labels of the plan's YAML do not configure
	// them, their claims do.
	DRALanes []string `json:"dra_lanes,omitempty"`
}

// Layout names the GPU's configuration: whole, time-slicing-4, or the MIG
// geometry.
func (g GPU) Layout() string {
	switch g.Mode {
	case ModeTimeSlicing:
		return fmt.Sprintf("time-slicing-%d", g.Replicas)
	case ModeMIG:
		return "mig-" + strings.Join(g.Slices, "-")
	case ModeMPS:
		return fmt.Sprintf("mps-%d", g.Replicas)
	}
	return string(ModeWhole)
}

// Assignment is where one lane goes.
type Assignment struct {
	Lane     string       `json:"lane"`
	Workload workload.Ref `json:"workload"`
	Pods     []string     `json:"pods"`
	GPU      int          `json:"gpu"`
	Mode     Mode         `json:"mode"`
	// Resource is the extended resource its pods should request, one of it.
	Resource vocab.Resource `json:"resource"`
	From     string         `json:"from"`
	// AllocationPath is how the lane's pods get their GPU today
	// (device-plugin, or dra through Claims): through DRA, the new
	// layout is requested in the claims, not as Resource in the limits.
	AllocationPath vocab.AllocationPath `json:"allocation_path"`
	Claims         []string             `json:"claims,omitempty"`
	// Slice is the MIG profile on MIG.
	Slice string `json:"slice,omitempty"`
	// Moved is set, in a pool that keeps today's layout, on a lane that
	// moves off its GPU today (a leak, to a GPU of its own): the one
	// request that changes.
	Moved           bool    `json:"moved,omitempty"`
	Training        bool    `json:"training_like"`
	PeakMemoryBytes float64 `json:"peak_memory_bytes"`
	P95Load         float64 `json:"p95_load"`
	GrowthBytes     float64 `json:"growth_bytes,omitempty"`
}

// ErrReplay is wrapped by Make's error when a layout fails its replay.
var ErrReplay = errors.New("the plan failed its replay")

// ErrNoPool is wrapped by Make's error when no pool can be planned: the
// window's GPUs are all of models the catalog does not know.
var ErrNoPool = errors.New("no GPU pool to plan")

// Make plans every pool and replays the measured window on the result. A
// plan whose replay overcommits memory at any step is an error, never a
// plan.
func Make(d *Data, pol Policy, prices *price.Prices) (*Plan, error) {
	if len(d.Pools) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoPool, cmp.Or(strings.Join(d.Notes, "; "), "the window has no GPUs of a known model"))
	}
	out := &Plan{Start: d.Start, End: d.End, Step: d.Step, StepS: d.Step.Seconds(), Policy: pol, Notes: d.Notes}
	for _, pool := range d.Pools {
		sizeLanes(pool)
		pp := planPool(pool, pol)
		if pp.NodesNeeded > 0 && !pol.NoTimeSlicing && slices.ContainsFunc(pp.GPUs, func(g GPU) bool { return g.Mode == ModeTimeSlicing }) {
			alt := pol
			alt.NoTimeSlicing = true
			if ap := planPool(pool, alt); ap.NodesNeeded < pp.NodesNeeded {
				ap.Notes = append(ap.Notes, fmt.Sprintf("no time-slicing: the layout with it needs %d nodes (%s), this one %d (%s), and nodes are what the cloud bills",
					pp.NodesNeeded, gpus(pp.GPUsNeeded), ap.NodesNeeded, gpus(ap.GPUsNeeded)))
				pp = ap
			}
		}
		if pool.Nodes > 0 && pp.NodesNeeded > pool.Nodes {
			pp = keepToday(pool, pp)
		}
		pp.Replay = replay(pool, pp)
		if pp.Replay.OvercommittedSteps > 0 {
			return nil, fmt.Errorf("%w: %s: %d overcommitted memory steps (%s)", ErrReplay, pool.Model.Key, pp.Replay.OvercommittedSteps, pp.Replay.worst())
		}
		price, priced := pricePerHour(prices, pool.Product)
		if priced {
			pp.PriceSource = prices.Source(pool.Product)
		}
		switch {
		case !priced:
			pp.Notes = append(pp.Notes, "no price for "+pool.Product+": its saving is unknown")
		case pp.NodesNeeded > 0 || pp.NodesToday > 0:
			// Clouds bill the instance; the node's GPUs at the per-GPU
			// price stand in where its type is not in the table.
			node := price * float64(pp.GPUsPerNode)
			if v, src, ok := prices.PerNodeHour(pool.InstanceType, pool.Product); ok {
				node, pp.PriceSource = v, src
			} else if pool.InstanceType != "" {
				pp.Notes = append(pp.Notes, fmt.Sprintf("instance type %s is not in the price table: a node is priced as its %d GPUs", pool.InstanceType, pp.GPUsPerNode))
			}
			pp.InstanceType = pool.InstanceType
			saving := float64(pp.NodesToday-pp.NodesNeeded) * node * vocab.HoursPerMonth
			if _, _, typed := prices.PerNodeHour(pool.InstanceType, pool.Product); !typed && pp.NodesToday > pp.NodesNeeded {
				// Priced by their GPUs, the freed nodes are the pool's
				// smallest: the layout fills nodes of the largest shape.
				saving = float64(freedNodeGPUs(pool, pp.NodesToday-pp.NodesNeeded)) * price * vocab.HoursPerMonth
			}
			if pp.NodesNeeded > pp.NodesToday {
				// Only a lane that did not fit today's layout gets here
				// (keepToday): a layout with more nodes never saves.
				saving = min(saving, 0)
			}
			pp.PricePerHour, pp.PricePerNodeHour, pp.MonthlySavingUSD = &price, &node, &saving
		default:
			// Without the node shape a saving in nodes cannot be told;
			// counting freed GPUs would promise money no node gives back.
			zero := 0.0
			pp.PricePerHour, pp.MonthlySavingUSD = &price, &zero
			pp.Notes = append(pp.Notes, "the pool's nodes are unknown (no node label): its saving is not counted")
		}
		pp.CapacityFreedGPUs = capacityFreed(pool, pp)
		if priced {
			v := float64(pp.CapacityFreedGPUs) * price * vocab.HoursPerMonth
			pp.CapacityFreedMonthlyUSD = &v
			out.CapacityFreedMonthlyUSD += v
		}
		out.CapacityFreedGPUs += pp.CapacityFreedGPUs
		if pp.MonthlySavingUSD != nil {
			out.MonthlySavingUSD += *pp.MonthlySavingUSD
		}
		out.GPUsToday += pp.GPUsToday
		out.GPUsNeeded += pp.GPUsNeeded
		out.NodesToday += pp.NodesToday
		out.NodesNeeded += pp.NodesNeeded
		out.HeadroomGPUs += pp.HeadroomGPUs
		out.Pools = append(out.Pools, pp)
	}
	slices.SortFunc(out.Pools, func(a, b PoolPlan) int { return cmp.Compare(a.Model, b.Model) })
	return out, nil
}

// freedNodeGPUs are the GPUs of the pool's n smallest nodes, the ones a
// layout on fewer nodes frees; n nodes of the pool's shape where the GPUs
// of each node were not read.
func freedNodeGPUs(pool *Pool, n int) int {
	counts := slices.Sorted(maps.Values(pool.nodeGPUs))
	if len(counts) != pool.Nodes || n > len(counts) {
		return n * pool.GPUsPerNode
	}
	sum := 0
	for _, c := range counts[:n] {
		sum += c
	}
	return sum
}

// capacityFreed is how many GPUs pp frees on the nodes it keeps: those it
// frees less the freed nodes' (their price is the saving), at most the
// kept nodes' headroom; where the nodes are unknown, every GPU it frees.
// A node of the pool smaller than its shape (GPUsPerNode is the largest
// node's) makes headroom of GPUs that do not exist; the bound by the GPUs
// freed keeps them out.
func capacityFreed(pool *Pool, pp PoolPlan) int {
	freed := pp.Freed()
	if pp.NodesNeeded == 0 && pp.NodesToday == 0 {
		return max(freed, 0)
	}
	freed -= freedNodeGPUs(pool, max(pp.NodesToday-pp.NodesNeeded, 0))
	return max(min(freed, pp.HeadroomGPUs), 0)
}

// keepToday is the pool's plan where the packed layout pp needs more
// nodes than the pool has: today's layout, which needs no more, unless a
// lane does not fit it; then pp, saying which lanes and why.
func keepToday(pool *Pool, pp PoolPlan) PoolPlan {
	more := fmt.Sprintf("the packed layout (%s) needs %s for %s, more than today's %d", pp.Method, plural(pp.NodesNeeded, "node"), gpus(pp.GPUsNeeded), pool.Nodes)
	if pp.GPUsNeeded <= pool.Nodes*pool.GPUsPerNode {
		more += " (a node takes one device plugin config, so whole and time-sliced GPUs are packed on nodes of their own, and a pod's GPUs on one node)"
	}
	today, unfit := todayLayout(pool)
	if len(unfit) == 0 {
		today.Notes = append([]string{fmt.Sprintf("today's layout is kept, on %s for %s: %s", plural(today.NodesNeeded, "node"), gpus(today.GPUsNeeded), more)}, today.Notes...)
		return today
	}
	pp.DidNotFit = unfit
	names := make([]string, len(unfit))
	for i, u := range unfit {
		names[i] = u.Lane
		pp.Notes = append(pp.Notes, fmt.Sprintf("%s does not fit today's layout: %s", u.Lane, u.Why))
	}
	verb := "do"
	if len(names) == 1 {
		verb = "does"
	}
	pp.Notes = append(pp.Notes, fmt.Sprintf("%s; today's layout is not kept, since %s %s not fit it", more, strings.Join(names, ", "), verb))
	return pp
}

// planPool runs every strategy's first-fit-decreasing and local search,
// and the exact search on small pools, and keeps the fewest GPUs. The
// pool's lanes are sized first (sizeLanes).
func planPool(pool *Pool, pol Policy) PoolPlan {
	p := newPacker(pool, pol)
	var (
		best     []*bin
		bestName string
	)
	for _, s := range strategies {
		pl := p.places(s)
		bins := p.localSearch(p.firstFitDecreasing(pl), pl)
		if best == nil || len(bins) < len(best) {
			best, bestName = bins, "first-fit-decreasing ("+s.name+") + local search"
		}
	}
	if pool.Lanes == nil {
		bestName = "nothing to place"
	}
	if bins := p.exact(); bins != nil && len(bins) <= len(best) && uniform(pool, bins) {
		best, bestName = bins, "exact"
	}
	// A replica alone on its GPU is a whole GPU, unless another lane of its
	// workload shares one: one pod template asks for one resource.
	alone := map[workload.Ref]bool{}
	for _, b := range best {
		for _, i := range b.lanes {
			w := pool.Lanes[i].Workload
			if v, seen := alone[w]; b.mode == ModeTimeSlicing {
				alone[w] = len(b.lanes) == 1 && (!seen || v)
			} else if !seen {
				alone[w] = false
			}
		}
	}
	for _, b := range best {
		if b.mode == ModeTimeSlicing && len(b.lanes) == 1 && alone[pool.Lanes[b.lanes[0]].Workload] {
			b.mode = ModeWhole
		}
	}
	pp := PoolPlan{Model: pool.Model.Key, Product: pool.Product, GPUsToday: pool.GPUsToday, GPUsNeeded: len(best), Method: bestName}
	// Biggest GPUs first, so that the plan reads the same every run.
	slices.SortStableFunc(best, func(a, b *bin) int {
		return cmp.Or(cmp.Compare(modeRank(a.mode), modeRank(b.mode)), cmp.Compare(pool.Lanes[a.lanes[0]].Name(), pool.Lanes[b.lanes[0]].Name()))
	})
	for gi, b := range best {
		g := GPU{Index: gi, Mode: b.mode}
		order := make([]int, len(b.lanes))
		for k := range order {
			order[k] = k
		}
		sort.SliceStable(order, func(x, y int) bool {
			return pool.Lanes[b.lanes[order[x]]].Name() < pool.Lanes[b.lanes[order[y]]].Name()
		})
		for _, k := range order {
			l := pool.Lanes[b.lanes[k]]
			a := assignmentOf(l, gi, b.mode)
			if b.mode == ModeMIG {
				pr := pool.Model.MIG[b.profiles[k]]
				a.Slice, a.Resource = pr.Name, pr.Resource()
				g.Slices = append(g.Slices, pr.Name)
			}
			g.Lanes = append(g.Lanes, l.Name())
			if a.AllocationPath == vocab.AllocationPathDRA {
				g.DRALanes = append(g.DRALanes, l.Name())
			}
			pp.Assignments = append(pp.Assignments, a)
		}
		if b.mode == ModeTimeSlicing {
			g.Replicas = len(b.lanes)
		}
		slices.Sort(g.Slices)
		pp.GPUs = append(pp.GPUs, g)
	}
	var notes []string
	pp.Nodes, notes = packNodes(pool, &pp)
	pp.Notes = append(pp.Notes, notes...)
	if pp.Nodes == nil && len(pp.GPUs) == 0 && pool.GPUsPerNode > 0 && pool.Nodes > 0 {
		// Every lane released (ApplyAdvice): the pool's nodes all go.
		pp.Nodes = []Node{}
	}
	if pp.Nodes != nil {
		pp.GPUsPerNode, pp.NodesToday, pp.NodesNeeded = pool.GPUsPerNode, pool.Nodes, len(pp.Nodes)
		pp.HeadroomGPUs = pp.NodesNeeded*pool.GPUsPerNode - pp.GPUsNeeded
	}
	for _, l := range pool.Lanes {
		if l.GrowthBytes > 0 {
			pp.Notes = append(pp.Notes, fmt.Sprintf("%s grows: %.1f GiB reserved above its peak", l.Name(), l.GrowthBytes/(1<<30)))
		}
		if l.stats.peakMem > pool.CapacityBytes {
			pp.Notes = append(pp.Notes, fmt.Sprintf("%s is projected past a whole GPU's memory: it will run out of memory even alone", l.Name()))
		}
	}
	return pp
}

// assignmentOf places lane l on GPU gi in mode m; a MIG slice is the
// caller's to set.
func assignmentOf(l *Lane, gi int, m Mode) Assignment {
	a := Assignment{Lane: l.Name(), Workload: l.Workload, Pods: l.Pods, GPU: gi, Mode: m, From: l.From,
		AllocationPath: cmp.Or(l.AllocationPath, vocab.AllocationPathDevicePlugin), Claims: l.Claims,
		Training: l.Training, PeakMemoryBytes: l.stats.peakMem - l.GrowthBytes, P95Load: l.stats.p95Load, GrowthBytes: l.GrowthBytes}
	switch m {
	case ModeWhole:
		a.Resource = vocab.ResourceGPU
	case ModeTimeSlicing, ModeMPS:
		a.Resource = vocab.ResourceGPUShared
	}
	return a
}

func modeRank(m Mode) int {
	switch m {
	case ModeWhole:
		return 0
	case ModeMIG:
		return 1
	}
	return 2
}

// uniform says whether every workload's lanes have one kind of place in
// bins (one resource request per pod template). Whole GPUs and slices of
// one profile count as one kind each.
func uniform(pool *Pool, bins []*bin) bool {
	kind := map[workload.Ref]string{}
	for _, b := range bins {
		for k, i := range b.lanes {
			key := string(b.mode)
			if b.mode == ModeMIG {
				key += "/" + pool.Model.MIG[b.profiles[k]].Name
			}
			w := pool.Lanes[i].Workload
			if prev, ok := kind[w]; ok && prev != key {
				return false
			}
			kind[w] = key
		}
	}
	return true
}

// sizeLanes summarises each lane of pool (statsOf) once: a lane's stats
// do not depend on the policy, and a pool planned twice (with and without
// time-slicing, Make) would otherwise size a week's steps of every lane
// twice. The quantiles' scratch is shared by the lanes.
func sizeLanes(pool *Pool) {
	var mem, load []float64
	for _, l := range pool.Lanes {
		l.stats, mem, load = statsOf(l, mem[:0], load[:0])
	}
}

// statsOf summarises a lane over the steps it ran, for sizing and
// ordering; the fit checks use the steps themselves. mem and load are
// scratch for the running steps' values, returned for the next lane.
func statsOf(l *Lane, mem, load []float64) (laneStats, []float64, []float64) {
	run := make([]uint64, (len(l.Mem)+63)/64)
	s := laneStats{run: run, mem: make([]float32, len(l.Mem))}
	for t := range l.Mem {
		s.mem[t] = l.plannedMem(t)
		if !l.running(t) {
			continue
		}
		run[t/64] |= 1 << (t % 64)
		mem = append(mem, float64(s.mem[t]))
		load = append(load, float64(l.Load[t]))
	}
	s.steps = len(mem)
	s.blocks = summarize(s.mem, l.Load, 2, blockSummary{})
	if len(mem) == 0 {
		return s, mem, load
	}
	s.peakMem, s.p99Mem = slices.Max(mem), quantile(mem, 0.99)
	s.peakLoad, s.p95Load = slices.Max(load), quantile(load, 0.95)
	return s, mem, load
}

// quantile interpolates as PromQL's quantile_over_time does; it reorders
// v. It selects the two ranks it needs instead of sorting: a lane's steps
// are a week's 10,080, and sorting them for every lane was half of what a
// plan of 1,000 lanes cost beside its analysis.
func quantile(v []float64, q float64) float64 {
	rank := q * float64(len(v)-1)
	lo := int(rank)
	if lo+1 >= len(v) {
		return slices.Max(v)
	}
	a := selectNth(v, lo)
	b := slices.Min(v[lo+1:])
	return a + (b-a)*(rank-float64(lo))
}

// selectNth reorders v so that v[k] is what sorting would put there, with
// nothing greater before it and nothing smaller after it, and returns it
// (quickselect with a median of three and a three-way partition, so that
// the many equal values of a lane's steps, zeros above all, stay linear).
func selectNth(v []float64, k int) float64 {
	lo, hi := 0, len(v)-1
	for lo < hi {
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi]
		p := max(min(a, b), min(max(a, b), c))
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case v[i] < p:
				v[lt], v[i] = v[i], v[lt]
				lt++
				i++
			case v[i] > p:
				v[i], v[gt] = v[gt], v[i]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return p
		}
	}
	return v[k]
}
