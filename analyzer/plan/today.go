package plan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/vocab"
)

// Today's layout is a plan too: it held the window's workloads on the
// pool's nodes, since they ran there. Make keeps it for a pool where the
// packed layout needs more nodes than the pool has (a node takes one
// device plugin config, so the packer puts whole and time-sliced GPUs on
// nodes of their own, where today a node may hold both), unless a lane
// does not fit it: then the packed layout stands, says which lane and
// why, and saves nothing.

// Unfit is a lane that today's layout cannot hold, and why.
type Unfit struct {
	Lane string `json:"lane"`
	Why  string `json:"why"`
}

// todayGPU is one GPU of today's layout while it is rebuilt.
type todayGPU struct {
	node, uuid string
	at         string // the GPU, for reasons
	mode       Mode
	lanes      []*Lane
	moved      bool // a lane moved here, to a GPU no lane holds today
}

// todayLayout rebuilds the pool's layout today from where each lane's
// latest pod holds its GPU (Lane.Held): one GPU per GPU held, in the mode
// it is held in, on its node. It must hold what the packer holds of the
// future: a leak's projected growth at every step it runs. A leak whose
// GPU today cannot hold its growth beside its co-tenants (or in its MIG
// slice), or that grows past a whole GPU and has co-tenants, which the
// packer never gives it, moves alone to a GPU of today's nodes that no
// lane holds, as a whole GPU; where there is none, it does not fit.
// The layout is proven as a plan is, by the window replayed on it. Any
// lane that does not fit makes it no plan.
func todayLayout(pool *Pool) (PoolPlan, []Unfit) {
	type gpuKey struct{ node, uuid string }
	byKey := map[gpuKey]*todayGPU{}
	var unfit []Unfit
	for _, l := range pool.Lanes {
		if l.Held.UUID == "" {
			unfit = append(unfit, Unfit{l.Name(), "the window's series do not say which GPU its pods hold today"})
			continue
		}
		k := gpuKey{l.Held.Node, l.Held.UUID}
		if byKey[k] == nil {
			byKey[k] = &todayGPU{node: k.node, uuid: k.uuid, at: fmt.Sprintf("%s of node %s", k.uuid, cmp.Or(k.node, "(unnamed)"))}
		}
		byKey[k].lanes = append(byKey[k].lanes, l)
	}
	var held []*todayGPU
	for _, k := range slices.SortedFunc(maps.Keys(byKey), func(a, b gpuKey) int {
		return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.uuid, b.uuid))
	}) {
		g := byKey[k]
		slices.SortFunc(g.lanes, func(a, b *Lane) int { return cmp.Compare(a.Name(), b.Name()) })
		mode, why := todayMode(g.lanes)
		if why != "" {
			for _, l := range g.lanes {
				unfit = append(unfit, Unfit{l.Name(), g.at + " " + why})
			}
			continue
		}
		g.mode = mode
		held = append(held, g)
	}

	// Each leak's growth, held where it is or on a free GPU.
	free := freeGPUs(pool, held)
	for _, g := range slices.Clone(held) {
		for _, l := range slices.Clone(g.lanes) {
			why := outgrows(pool, g, l)
			if why == "" {
				continue
			}
			if len(free) == 0 {
				unfit = append(unfit, Unfit{l.Name(), why + ", and today's nodes have no GPU that no lane holds to give it alone"})
				continue
			}
			node := free[0]
			free = free[1:]
			g.lanes = slices.DeleteFunc(g.lanes, func(x *Lane) bool { return x == l })
			// Its co-tenants keep their GPU and their requests.
			held = append(held, &todayGPU{node: node, mode: ModeWhole, lanes: []*Lane{l}, moved: true,
				at: fmt.Sprintf("a GPU of node %s that no lane holds today", node)})
		}
	}
	held = slices.DeleteFunc(held, func(g *todayGPU) bool { return len(g.lanes) == 0 })
	slices.SortStableFunc(held, func(a, b *todayGPU) int { return cmp.Compare(a.node, b.node) })

	pp := PoolPlan{Model: pool.Model.Key, Product: pool.Product, GPUsToday: pool.GPUsToday, Method: "today's layout", KeepsToday: true}
	for _, h := range held {
		g := GPU{Index: len(pp.GPUs), Mode: h.mode, UUID: h.uuid}
		for _, l := range h.lanes {
			a := assignmentOf(l, g.Index, h.mode)
			a.Moved = h.moved
			if h.mode == ModeMIG {
				pr, ok := profileNamed(pool, l.Held.Profile)
				if !ok {
					unfit = append(unfit, Unfit{l.Name(), fmt.Sprintf("its MIG profile %q on %s is not in the catalog's %s geometry", l.Held.Profile, h.at, pool.Model.Key)})
					continue
				}
				a.Slice, a.Resource = pr.Name, pr.Resource()
				g.Slices = append(g.Slices, pr.Name)
			}
			g.Lanes = append(g.Lanes, l.Name())
			if a.AllocationPath == vocab.AllocationPathDRA {
				g.DRALanes = append(g.DRALanes, l.Name())
			}
			pp.Assignments = append(pp.Assignments, a)
		}
		if h.mode == ModeTimeSlicing || h.mode == ModeMPS {
			g.Replicas = len(g.Lanes)
		}
		slices.Sort(g.Slices)
		pp.GPUs = append(pp.GPUs, g)
	}
	pp.GPUsNeeded = len(pp.GPUs)

	// Nodes as they are today; GPUs of no named node fill nodes of the
	// pool's shape in order.
	per := max(1, pool.GPUsPerNode)
	for gi, h := range held {
		k := slices.IndexFunc(pp.Nodes, func(n Node) bool { return n.Name == h.node && (h.node != "" || len(n.GPUs) < per) })
		if k < 0 {
			pp.Nodes = append(pp.Nodes, Node{Index: len(pp.Nodes), Name: h.node, Config: ConfigUnchanged})
			k = len(pp.Nodes) - 1
		}
		pp.Nodes[k].GPUs = append(pp.Nodes[k].GPUs, gi)
	}
	if len(pp.Nodes) > pool.Nodes {
		for _, n := range pp.Nodes[pool.Nodes:] {
			for _, gi := range n.GPUs {
				for _, lane := range pp.GPUs[gi].Lanes {
					unfit = append(unfit, Unfit{lane, fmt.Sprintf("its GPU today, %s, is on a node beyond the %s that the pool's GPUs reported from", held[gi].at, plural(pool.Nodes, "node"))})
				}
			}
		}
	}

	// The proof: the window replayed.
	for gi, gr := range replay(pool, pp).GPUs {
		if gr.OvercommittedSteps == 0 {
			continue
		}
		for _, lane := range pp.GPUs[gi].Lanes {
			unfit = append(unfit, Unfit{lane, fmt.Sprintf("on %s today, beside %s, the window replayed there overcommits its memory at %d steps (its pods moved GPUs in the window)",
				held[gi].at, others(pp.GPUs[gi].Lanes, lane), gr.OvercommittedSteps)})
		}
	}
	if len(unfit) > 0 {
		return PoolPlan{}, unfit
	}
	pp.GPUsPerNode, pp.NodesToday, pp.NodesNeeded = pool.GPUsPerNode, pool.Nodes, len(pp.Nodes)
	pp.HeadroomGPUs = pp.NodesNeeded*pool.GPUsPerNode - pp.GPUsNeeded
	for _, a := range pp.Assignments {
		if a.Moved {
			pp.Notes = append(pp.Notes, fmt.Sprintf("%s moves from its GPU today to %s, whole, for its growth: its request changes to %s", a.Lane, held[a.GPU].at, a.Resource))
		}
	}
	for _, l := range pool.Lanes {
		switch {
		case l.GrowthBytes <= 0:
		case l.stats.peakMem > pool.CapacityBytes || peakOf(l.Mem)+l.GrowthBytes >= pool.CapacityBytes:
			pp.Notes = append(pp.Notes, fmt.Sprintf("%s is projected past a whole GPU's memory: it will run out of memory even alone", l.Name()))
		default:
			pp.Notes = append(pp.Notes, fmt.Sprintf("%s grows: %.1f GiB reserved above its peak", l.Name(), l.GrowthBytes/gibibyte))
		}
	}
	return pp, nil
}

// outgrows says why lane l's projected growth does not fit g, its GPU
// today, or "" when it does: beside g's other lanes at every step it
// runs (a whole or shared GPU), within its slice (MIG), or, growing past
// a whole GPU, alone on a GPU, which is all that any layout gives it.
func outgrows(pool *Pool, g *todayGPU, l *Lane) string {
	if l.GrowthBytes <= 0 {
		return ""
	}
	grows := fmt.Sprintf("its memory grows %.1f GiB above its peak over the horizon", l.GrowthBytes/gibibyte)
	if l.stats.peakMem > pool.CapacityBytes || peakOf(l.Mem)+l.GrowthBytes >= pool.CapacityBytes {
		if g.mode == ModeMIG || len(g.lanes) > 1 {
			return fmt.Sprintf("%s, past a whole GPU, and it shares %s today", grows, g.at)
		}
		return ""
	}
	if g.mode == ModeMIG {
		if pr, ok := profileNamed(pool, l.Held.Profile); ok && l.stats.peakMem > pr.MemoryBytes {
			return fmt.Sprintf("%s, to %.1f GiB, more than its %s slice on %s holds (%.1f GiB)", grows, l.stats.peakMem/gibibyte, pr.Name, g.at, pr.MemoryBytes/gibibyte)
		}
		return ""
	}
	fullest := 0.0
	for t := range l.Mem {
		if !l.running(t) {
			continue
		}
		sum := 0.0
		for _, o := range g.lanes {
			sum += float64(o.stats.mem[t])
		}
		fullest = max(fullest, sum)
	}
	if fullest <= pool.CapacityBytes {
		return ""
	}
	names := make([]string, len(g.lanes))
	for i, o := range g.lanes {
		names[i] = o.Name()
	}
	return fmt.Sprintf("%s: on %s today, beside %s, that is %.1f GiB at the fullest step, more than the GPU's %.1f GiB",
		grows, g.at, others(names, l.Name()), fullest/gibibyte, pool.CapacityBytes/gibibyte)
}

// freeGPUs lists, one entry per GPU, the named nodes' GPUs that no lane
// holds today: the nodes' GPUs as the window's series counted them
// (Pool.nodeGPUs; the pool's shape where not read), less those held, and
// no more than the pool's GPUs less those held. The nodes holding lanes
// come first, in name order.
func freeGPUs(pool *Pool, held []*todayGPU) []string {
	used := map[string]int{}
	for _, g := range held {
		used[g.node]++
	}
	total := pool.GPUsToday - len(held)
	var out []string
	add := func(node string, n int) {
		for ; n > 0 && total > 0; n-- {
			out = append(out, node)
			total--
		}
	}
	for _, node := range slices.Sorted(maps.Keys(used)) {
		if node == "" {
			continue
		}
		count, ok := pool.nodeGPUs[node]
		if !ok {
			count = pool.GPUsPerNode
		}
		add(node, count-used[node])
	}
	for _, node := range slices.Sorted(maps.Keys(pool.nodeGPUs)) {
		if _, ok := used[node]; !ok && node != "" {
			add(node, pool.nodeGPUs[node])
		}
	}
	return out
}

// todayMode is the mode a GPU is held in today, from its lanes' sharing
// labels: MIG, MPS or time-slicing where any lane says so, whole where
// none does and they never run at the same step (jobs that take turns),
// time-slicing where they do (dcgm-exporter reads a time-sliced GPU with
// one pod running as whole). A GPU whose lanes are MIG slices and GPUs
// without MIG changed its MIG mode in the window: no one mode holds them.
func todayMode(ls []*Lane) (Mode, string) {
	var mig, ts, mps int
	for _, l := range ls {
		switch l.Held.Sharing {
		case vocab.SharingMIG:
			mig++
		case vocab.SharingTimeSlicing:
			ts++
		case vocab.SharingMPS:
			mps++
		}
	}
	switch {
	case mig > 0 && mig < len(ls):
		return "", "held MIG slices and a GPU without MIG in the window (its MIG mode changed): no one mode holds its lanes"
	case mig > 0:
		return ModeMIG, ""
	case mps > 0 && mps >= ts:
		return ModeMPS, ""
	case ts > 0:
		return ModeTimeSlicing, ""
	}
	busy := make([]uint64, len(ls[0].stats.run))
	for _, l := range ls {
		for k, w := range l.stats.run {
			if busy[k]&w != 0 {
				return ModeTimeSlicing, ""
			}
			busy[k] |= w
		}
	}
	return ModeWhole, ""
}

// others lists lanes but one, for reasons.
func others(lanes []string, but string) string {
	var out []string
	for _, l := range lanes {
		if l != but {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return "no other lane"
	}
	return strings.Join(out, ", ")
}

const gibibyte = 1 << 30
