package plan

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// layout builds a pool plan of GPUs in the given modes, each held by its
// own pod, except that pods[i] names the pod of GPU i where set.
func layout(modes []Mode, pods map[int]string) PoolPlan {
	var pp PoolPlan
	for i, m := range modes {
		g := GPU{Index: i, Mode: m}
		if m == ModeTimeSlicing {
			g.Replicas = 2
		}
		pp.GPUs = append(pp.GPUs, g)
		pod := fmt.Sprintf("pod-%d", i)
		if p, ok := pods[i]; ok {
			pod = p
		}
		pp.Assignments = append(pp.Assignments, Assignment{Workload: workload.Ref{Kind: "Pod", Namespace: "ns", Name: pod}, Pods: []string{pod}, GPU: i, Mode: m})
	}
	return pp
}

func repeat(m Mode, n int) []Mode { return slices.Repeat([]Mode{m}, n) }

func TestPackNodes(t *testing.T) {
	four := map[int]string{6: "trainer-0", 7: "trainer-0", 8: "trainer-0", 9: "trainer-0"}
	cases := []struct {
		name      string
		perNode   int
		modes     []Mode
		pods      map[int]string
		wantNodes int
		together  []int // GPUs that must share a node
	}{
		// 7 whole GPUs on 8-GPU nodes: one node, one GPU of headroom.
		{name: "fits one node", perNode: 8, modes: repeat(ModeWhole, 7), wantNodes: 1},
		// A node's device plugin config is one: 2 whole and 2 time-sliced
		// GPUs need two nodes, though four GPUs would fit on one.
		{name: "whole and time-sliced apart", perNode: 8, modes: append(repeat(ModeWhole, 2), repeat(ModeTimeSlicing, 2)...), wantNodes: 2},
		// MIG GPUs fill any node: 4 whole and 5 MIG on 4-GPU nodes need ⌈9/4⌉ = 3.
		{name: "MIG fills gaps", perNode: 4, modes: append(repeat(ModeWhole, 4), repeat(ModeMIG, 5)...), wantNodes: 3},
		// 2 time-sliced and 2 MIG share a node with room for 4.
		{name: "MIG beside time-slicing", perNode: 4, modes: append(repeat(ModeTimeSlicing, 2), repeat(ModeMIG, 2)...), wantNodes: 1},
		// A pod with 4 GPUs (6-9) stays on one node; 6 others of one GPU
		// each fill it and start a second: 10 GPUs on 2 nodes.
		{name: "4-GPU pod on one node", perNode: 8, modes: repeat(ModeWhole, 10), pods: four, wantNodes: 2, together: []int{6, 7, 8, 9}},
		// Five pods of 3 GPUs on 8-GPU nodes: two pods a node, so 3 nodes
		// for 15 GPUs, where counting GPUs says 2.
		{name: "pods do not split", perNode: 8, modes: repeat(ModeWhole, 15),
			pods:      map[int]string{0: "a", 1: "a", 2: "a", 3: "b", 4: "b", 5: "b", 6: "c", 7: "c", 8: "c", 9: "d", 10: "d", 11: "d", 12: "e", 13: "e", 14: "e"},
			wantNodes: 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pp := layout(c.modes, c.pods)
			nodes, notes := packNodes(&Pool{GPUsPerNode: c.perNode, Nodes: 1}, &pp)
			if len(nodes) != c.wantNodes {
				t.Fatalf("%d nodes %+v, want %d (notes %q)", len(nodes), nodes, c.wantNodes, notes)
			}
			where := map[int]int{}
			for _, n := range nodes {
				if len(n.GPUs) > c.perNode {
					t.Errorf("node %d holds %d GPUs, more than %d", n.Index, len(n.GPUs), c.perNode)
				}
				var whole, shared bool
				for _, g := range n.GPUs {
					if _, dup := where[g]; dup {
						t.Errorf("GPU %d on two nodes", g)
					}
					where[g] = n.Index
					whole = whole || c.modes[g] == ModeWhole
					shared = shared || c.modes[g] == ModeTimeSlicing
				}
				if whole && shared {
					t.Errorf("node %d mixes whole and time-sliced GPUs: %v", n.Index, n.GPUs)
				}
				if want := map[bool]string{true: "time-slicing-2", false: "default"}[shared]; n.Config != want {
					t.Errorf("node %d config %q, want %q", n.Index, n.Config, want)
				}
			}
			if len(where) != len(c.modes) {
				t.Errorf("%d of %d GPUs placed", len(where), len(c.modes))
			}
			for _, g := range c.together {
				if where[g] != where[c.together[0]] {
					t.Errorf("the pod's GPUs %v are on nodes %v", c.together, where)
				}
			}
		})
	}
}

// TestSavingIsFreedNodes: the plan's saving is the freed nodes' price;
// GPUs freed on nodes that stay are headroom, worth nothing.
func TestSavingIsFreedNodes(t *testing.T) {
	prices := price.DefaultPrices()
	const product = "NVIDIA H100 80GB HBM3"
	price, err := prices.PerHour(product)
	if err != nil {
		t.Fatal(err)
	}
	// n training-like lanes, each busy on a whole GPU all week.
	busy := func(n int) []*Lane {
		var ls []*Lane
		for i := range n {
			l := series(fmt.Sprintf("train-%d", i), 60, constant(40), constant(0.95))
			l.Training = true
			ls = append(ls, l)
		}
		return ls
	}
	cases := []struct {
		name                  string
		nodes, perNode, lanes int
		wantNodes, wantFreed  int
		wantHeadroom          int
	}{
		// 7 of 8 GPUs busy on one node: no node goes, one GPU of headroom.
		{"no node freed", 1, 8, 7, 1, 0, 1},
		// 4 nodes of 8 with 14 busy GPUs: 2 nodes hold them, 2 go.
		{"two nodes freed", 4, 8, 14, 2, 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pool := poolOf(t, product, busy(c.lanes)...)
			pool.GPUsToday, pool.Nodes, pool.GPUsPerNode = c.nodes*c.perNode, c.nodes, c.perNode
			p, err := Make(&Data{Pools: []*Pool{pool}, Steps: 60}, DefaultPolicy(), prices)
			if err != nil {
				t.Fatal(err)
			}
			pp := p.Pools[0]
			if pp.NodesToday != c.nodes || pp.NodesNeeded != c.wantNodes || pp.HeadroomGPUs != c.wantHeadroom {
				t.Errorf("nodes %d → %d, headroom %d GPUs; want %d → %d, %d", pp.NodesToday, pp.NodesNeeded, pp.HeadroomGPUs, c.nodes, c.wantNodes, c.wantHeadroom)
			}
			want := float64(c.wantFreed) * float64(c.perNode) * price * vocab.HoursPerMonth
			if pp.MonthlySavingUSD == nil || math.Abs(*pp.MonthlySavingUSD-want) > 0.01 || math.Abs(p.MonthlySavingUSD-want) > 0.01 {
				t.Errorf("saving %v (plan %v), want %d freed nodes × %d GPUs × $%.2f × %d h = %.2f", pp.MonthlySavingUSD, p.MonthlySavingUSD, c.wantFreed, c.perNode, price, vocab.HoursPerMonth, want)
			}
		})
	}
}

// TestShapeFromNodes: the cluster's nodes give a pool's node shape where
// the metrics do not, and its instance type, the most common one.
func TestShapeFromNodes(t *testing.T) {
	node := func(product string, count int, instance string) inventory.Node {
		return inventory.Node{Product: product, Count: count, Labels: map[string]string{LabelInstanceType: instance}}
	}
	nodes := map[string]inventory.Node{
		"a": node("NVIDIA-H100-80GB-HBM3", 8, "p5.48xlarge"), "b": node("NVIDIA-H100-80GB-HBM3", 8, "p5.48xlarge"),
		"c": node("NVIDIA-H100-80GB-HBM3", 8, "a3-highgpu-8g"), "d": node("NVIDIA-L4", 1, "g6.xlarge"),
	}
	h100 := &Pool{Product: "NVIDIA H100 80GB HBM3"}             // no node label in the metrics
	l4 := &Pool{Product: "NVIDIA L4", Nodes: 3, GPUsPerNode: 1} // the metrics' shape stands
	a100 := &Pool{Product: "NVIDIA A100-SXM4-80GB"}             // no such node
	ShapeFromNodes([]*Pool{h100, l4, a100}, nodes)
	if h100.GPUsPerNode != 8 || h100.Nodes != 3 || h100.InstanceType != "p5.48xlarge" {
		t.Errorf("H100 pool %+v, want 3 nodes of 8, p5.48xlarge", h100)
	}
	if l4.Nodes != 3 || l4.GPUsPerNode != 1 || l4.InstanceType != "g6.xlarge" {
		t.Errorf("L4 pool %+v, want the metrics' 3 nodes of 1, g6.xlarge", l4)
	}
	if a100.GPUsPerNode != 0 || a100.InstanceType != "" {
		t.Errorf("A100 pool %+v, want no shape", a100)
	}
}

// TestInstancePrice: a pool of a known instance type saves the instance's
// price per freed node; an unknown type falls back to the GPUs' price.
func TestInstancePrice(t *testing.T) {
	prices := price.DefaultPrices()
	const product = "NVIDIA H100 80GB HBM3"
	gpu, _ := prices.PerHour(product)
	node, _, ok := prices.PerNodeHour("p5.48xlarge", product)
	if !ok {
		t.Fatal("p5.48xlarge is not in the default table")
	}
	for _, c := range []struct {
		instance string
		perNode  float64
	}{{"p5.48xlarge", node}, {"x9.unknown", 8 * gpu}} {
		var lanes []*Lane
		for i := range 14 {
			l := series(fmt.Sprintf("train-%d", i), 60, constant(40), constant(0.95))
			l.Training = true
			lanes = append(lanes, l)
		}
		pool := poolOf(t, product, lanes...)
		pool.GPUsToday, pool.Nodes, pool.GPUsPerNode, pool.InstanceType = 32, 4, 8, c.instance
		p, err := Make(&Data{Pools: []*Pool{pool}, Steps: 60}, DefaultPolicy(), prices)
		if err != nil {
			t.Fatal(err)
		}
		// 14 busy GPUs on nodes of 8: 2 nodes of 4 go.
		want := 2 * c.perNode * vocab.HoursPerMonth
		if got := p.Pools[0].MonthlySavingUSD; got == nil || math.Abs(*got-want) > 0.01 {
			t.Errorf("%s: saving %v, want 2 nodes × $%.4f × 730 = %.2f", c.instance, got, c.perNode, want)
		}
	}
}
