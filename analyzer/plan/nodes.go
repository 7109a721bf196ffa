package plan

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Node is one planned node of a pool. The GPU Operator configures sharing
// per node: the device plugin's config (nvidia.com/device-plugin.config)
// applies to every non-MIG GPU of the node, so a node's time-sliced GPUs
// share one replica count and a whole GPU cannot sit beside them; the MIG
// manager's config (nvidia.com/mig.config) sets each GPU's geometry apart,
// so MIG GPUs fit on any node, beside whole or time-sliced ones.
type Node struct {
	Index int `json:"index"`
	// Name is the node's name today, where the pool keeps today's layout
	// (PoolPlan.KeepsToday).
	Name string `json:"name,omitempty"`
	// Config is the device plugin config to label the node with: "default"
	// (whole GPUs), or time-slicing-N; ConfigUnchanged where the pool
	// keeps today's layout.
	Config   string `json:"config"`
	Replicas int    `json:"replicas,omitempty"`
	// GPUs are indexes into the pool plan's GPUs, in the node's order.
	GPUs []int `json:"gpus"`
}

// ConfigUnchanged is the config of a node that keeps today's layout:
// whatever it is labelled with today.
const ConfigUnchanged = "unchanged"

// HasMIG says whether a MIG manager config is needed on the node.
func (n Node) HasMIG(gpus []GPU) bool {
	return slices.ContainsFunc(n.GPUs, func(i int) bool { return gpus[i].Mode == ModeMIG })
}

// nodeKind is what a group of GPUs needs of its node.
type nodeKind int

const (
	kindAny    nodeKind = iota // MIG only: any node
	kindWhole                  // whole GPUs: a node without time-slicing
	kindShared                 // time-sliced GPUs: a time-slicing node
)

// packNodes places the planned GPUs on nodes of pool.GPUsPerNode GPUs:
// the GPUs of one pod together (a pod's GPUs are on one node), whole and
// time-sliced GPUs on nodes of their own configuration, MIG GPUs wherever
// there is room. First-fit-decreasing over the pods' groups: optimal when
// every group is one GPU of one kind, an approximation otherwise. Nil when
// the pool's node shape is unknown.
func packNodes(pool *Pool, pp *PoolPlan) ([]Node, []string) {
	per := pool.GPUsPerNode
	if per <= 0 || len(pp.GPUs) == 0 {
		return nil, nil
	}
	var notes []string
	// Union the GPUs that one pod holds at once: a lane is one allocation
	// after another, so a pod in the lanes of two GPUs held both.
	parent := make([]int, len(pp.GPUs))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	first := map[string]int{}
	for _, a := range pp.Assignments {
		for _, pod := range a.Pods {
			key := a.Workload.Namespace + "/" + pod
			if g, ok := first[key]; ok {
				parent[find(g)] = find(a.GPU)
			} else {
				first[key] = a.GPU
			}
		}
	}
	groups := map[int][]int{}
	for i := range pp.GPUs {
		groups[find(i)] = append(groups[find(i)], i)
	}
	type group struct {
		gpus     []int
		kind     nodeKind
		replicas int
	}
	var gs []group
	for _, root := range slices.Sorted(maps.Keys(groups)) {
		g := group{gpus: groups[root]}
		whole := false
		for _, i := range g.gpus {
			switch pp.GPUs[i].Mode {
			case ModeTimeSlicing:
				g.kind = kindShared
				g.replicas = max(g.replicas, pp.GPUs[i].Replicas)
			case ModeWhole:
				whole = true
			}
		}
		if whole && g.kind == kindShared {
			notes = append(notes, fmt.Sprintf("GPUs %s are held by one pod as whole and time-sliced GPUs at once: no node configuration gives both; placed on a time-slicing node", indexList(g.gpus)))
		} else if whole {
			g.kind = kindWhole
		}
		for len(g.gpus) > per {
			notes = append(notes, fmt.Sprintf("GPUs %s are held by one pod, more than a node's %d: split across nodes", indexList(g.gpus), per))
			gs = append(gs, group{gpus: g.gpus[:per], kind: g.kind, replicas: g.replicas})
			g.gpus = g.gpus[per:]
		}
		gs = append(gs, g)
	}
	// Typed groups first, largest first, so that MIG GPUs fill the gaps.
	slices.SortStableFunc(gs, func(a, b group) int {
		return cmp.Or(cmp.Compare(min(int(b.kind), 1), min(int(a.kind), 1)), cmp.Compare(len(b.gpus), len(a.gpus)))
	})
	var nodes []Node
	var kinds []nodeKind
	for _, g := range gs {
		k := slices.IndexFunc(nodes, func(n Node) bool {
			return len(n.GPUs)+len(g.gpus) <= per && (g.kind == kindAny || kinds[n.Index] == kindAny || kinds[n.Index] == g.kind)
		})
		if k < 0 {
			nodes = append(nodes, Node{Index: len(nodes)})
			kinds = append(kinds, g.kind)
			k = len(nodes) - 1
		}
		if kinds[k] == kindAny {
			kinds[k] = g.kind
		}
		nodes[k].GPUs = append(nodes[k].GPUs, g.gpus...)
		nodes[k].Replicas = max(nodes[k].Replicas, g.replicas)
	}
	for i := range nodes {
		slices.Sort(nodes[i].GPUs)
		nodes[i].Config = "default"
		if kinds[i] == kindShared {
			nodes[i].Config = fmt.Sprintf("time-slicing-%d", nodes[i].Replicas)
		} else {
			nodes[i].Replicas = 0
		}
	}
	return nodes, notes
}

func indexList(is []int) string {
	s := make([]string, len(is))
	for k, i := range is {
		s[k] = fmt.Sprint(i)
	}
	return strings.Join(s, ", ")
}
