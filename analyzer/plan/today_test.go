package plan

import (
	"math"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"
)

// on says where the lane's pod holds its GPU today.
func on(l *Lane, uuid string, sharing vocab.Sharing) *Lane {
	l.Held = Holding{Node: "gpu-l4-01", UUID: uuid, Sharing: sharing}
	l.From = map[vocab.Sharing]string{vocab.SharingNone: "whole", vocab.SharingTimeSlicing: "time-slicing"}[sharing]
	return l
}

// TestTodayBoundsTheNodes: a plan never needs more nodes of a pool than
// it has, since today's layout held the same workloads on them; only a
// lane that today's layout cannot hold, said by name, lets it, and that
// plan saves nothing. The pools are L4s (no MIG), so that the packer's
// only places are whole and time-sliced GPUs, which a node's one device
// plugin config keeps on nodes of their own.
func TestTodayBoundsTheNodes(t *testing.T) {
	const steps = 120
	prices := price.DefaultPrices()
	price, err := prices.PerHour("L4")
	if err != nil {
		t.Fatal(err)
	}
	// A trainer busy on a whole L4, and two light services: the packer
	// gives the trainer a whole GPU and the services one time-sliced GPU
	// (a node each), or without time-slicing three whole GPUs (two
	// nodes of 2); today all three run on one node of 2 GPUs.
	trainerAndServices := func(today bool) []*Lane {
		tr := series("trainer", steps, constant(16), constant(0.9))
		tr.Training = true
		a := series("svc-a", steps, constant(4), constant(0.2))
		b := series("svc-b", steps, constant(4), constant(0.2))
		if today {
			on(tr, "GPU-0", vocab.SharingNone)
			on(a, "GPU-1", vocab.SharingTimeSlicing)
			on(b, "GPU-1", vocab.SharingTimeSlicing)
		}
		return []*Lane{tr, a, b}
	}
	// A service and a leak that share one L4 today (10 + 8 GiB of its
	// 22 GiB); the leak is projected to add 6 GiB, which fits an L4
	// alone (14 GiB) but not beside the service (24 GiB).
	leakBesideService := func() []*Lane {
		svc := on(series("svc", steps, constant(10), constant(0.2)), "GPU-0", vocab.SharingTimeSlicing)
		leak := on(series("leak", steps, constant(8), constant(0.1)), "GPU-0", vocab.SharingTimeSlicing)
		leak.GrowthBytes = 6 * gib
		return []*Lane{svc, leak}
	}
	// The trainer and the services, and a leak beside the services today
	// (4 + 4 + 4 GiB) projected to add 12 GiB: 24 GiB there, more than
	// the L4, but 16 GiB alone. The node's third GPU is held by no pod.
	leakAndAFreeGPU := func() []*Lane {
		ls := trainerAndServices(true)
		leak := on(series("leak", steps, constant(4), constant(0.1)), "GPU-1", vocab.SharingTimeSlicing)
		leak.GrowthBytes = 12 * gib
		return append(ls, leak)
	}
	cases := []struct {
		name             string
		lanes            []*Lane
		gpusToday        int
		perNode          int
		wantNodes        int
		wantGPUs         int
		wantKept         bool
		wantUnfit        []string // lanes, in order
		wantUnfitWhy     string
		wantMoved        []string // lanes that leave their GPU today
		wantSavingNodes  int      // freed nodes (negative: added)
		wantTogetherOnly map[string]string
	}{
		{name: "packer worse than today: today's layout kept", lanes: trainerAndServices(true), gpusToday: 2, perNode: 2,
			wantNodes: 1, wantGPUs: 2, wantKept: true, wantSavingNodes: 0,
			// Each lane where it is today: the trainer alone, the services together.
			wantTogetherOnly: map[string]string{"Deployment/ns/svc-a": "Deployment/ns/svc-b"}},
		// The packer: trainer and leak whole, the services time-sliced, 2
		// nodes; without time-slicing 4 whole GPUs, 2 nodes. Today's layout
		// gives the leak the free GPU, whole: 3 GPUs on today's node.
		{name: "a leak outgrows its GPU today: a free GPU of today's node takes it", lanes: leakAndAFreeGPU(), gpusToday: 3, perNode: 3,
			wantNodes: 1, wantGPUs: 3, wantKept: true, wantSavingNodes: 0, wantMoved: []string{"Deployment/ns/leak"},
			wantTogetherOnly: map[string]string{"Deployment/ns/svc-a": "Deployment/ns/svc-b"}},
		{name: "a leak outgrows its GPU today: the packed layout, saying why", lanes: leakBesideService(), gpusToday: 1, perNode: 1,
			wantNodes: 2, wantGPUs: 2, wantUnfit: []string{"Deployment/ns/leak"}, wantUnfitWhy: "grows 6.0 GiB", wantSavingNodes: -1},
		{name: "today's place unknown: the packed layout, saying why", lanes: trainerAndServices(false), gpusToday: 2, perNode: 2,
			wantNodes: 2, wantGPUs: 2, wantUnfit: []string{"Deployment/ns/trainer", "Deployment/ns/svc-a", "Deployment/ns/svc-b"},
			wantUnfitWhy: "do not say which GPU", wantSavingNodes: -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pool := poolOf(t, "L4", c.lanes...)
			pool.GPUsToday, pool.Nodes, pool.GPUsPerNode = c.gpusToday, 1, c.perNode
			p, err := Make(&Data{Pools: []*Pool{pool}, Steps: steps}, DefaultPolicy(), prices)
			if err != nil {
				t.Fatal(err)
			}
			pp := p.Pools[0]
			if pp.NodesToday != 1 || pp.NodesNeeded != c.wantNodes || pp.GPUsNeeded != c.wantGPUs || pp.KeepsToday != c.wantKept {
				t.Errorf("nodes %d → %d, %d GPUs, keeps today %v; want 1 → %d, %d GPUs, %v (notes %q)",
					pp.NodesToday, pp.NodesNeeded, pp.GPUsNeeded, pp.KeepsToday, c.wantNodes, c.wantGPUs, c.wantKept, pp.Notes)
			}
			// More nodes than today only with the lanes that did not fit,
			// named, and never a positive saving.
			var unfit []string
			for _, u := range pp.DidNotFit {
				unfit = append(unfit, u.Lane)
				if !strings.Contains(u.Why, c.wantUnfitWhy) {
					t.Errorf("%s did not fit because %q, want it to say %q", u.Lane, u.Why, c.wantUnfitWhy)
				}
				if !strings.Contains(strings.Join(pp.Notes, "\n"), u.Lane+" does not fit today's layout: "+u.Why) {
					t.Errorf("the notes %q do not say why %s did not fit", pp.Notes, u.Lane)
				}
			}
			if strings.Join(unfit, " ") != strings.Join(c.wantUnfit, " ") {
				t.Errorf("did not fit %v, want %v", unfit, c.wantUnfit)
			}
			if pp.NodesNeeded > pp.NodesToday && len(pp.DidNotFit) == 0 {
				t.Errorf("%d nodes of %d today, and no lane that did not fit", pp.NodesNeeded, pp.NodesToday)
			}
			want := float64(c.wantSavingNodes) * float64(c.perNode) * price * vocab.HoursPerMonth
			if pp.MonthlySavingUSD == nil || math.Abs(*pp.MonthlySavingUSD-want) > 0.01 {
				t.Errorf("saving %s, want %d nodes × %d L4 × $%.2f × 730 h = %.2f", money(pp.MonthlySavingUSD), c.wantSavingNodes, c.perNode, price, want)
			}
			if pp.NodesNeeded > pp.NodesToday && *pp.MonthlySavingUSD > 0 {
				t.Errorf("more nodes than today saving %.2f", *pp.MonthlySavingUSD)
			}
			if pp.Replay.OvercommittedSteps != 0 {
				t.Errorf("replay overcommits %d steps", pp.Replay.OvercommittedSteps)
			}
			for a, b := range c.wantTogetherOnly {
				ga, gb := gpuOf(pp, a), gpuOf(pp, b)
				if ga < 0 || ga != gb || len(pp.GPUs[ga].Lanes) != 2 {
					t.Errorf("%s on GPU %d, %s on %d, want them on one GPU, alone: %+v", a, ga, b, gb, pp.GPUs)
				}
			}
			var moved []string
			for _, a := range pp.Assignments {
				if a.Moved {
					moved = append(moved, a.Lane)
					if a.Mode != ModeWhole || len(pp.GPUs[a.GPU].Lanes) != 1 || pp.GPUs[a.GPU].UUID != "" {
						t.Errorf("%s moves to GPU %d (%s, today's %q) with %v, want a whole GPU of its own that no lane holds", a.Lane, a.GPU, a.Mode, pp.GPUs[a.GPU].UUID, pp.GPUs[a.GPU].Lanes)
					}
				}
			}
			if strings.Join(moved, " ") != strings.Join(c.wantMoved, " ") {
				t.Errorf("moved %v, want %v", moved, c.wantMoved)
			}
			if c.wantKept {
				// Nothing to roll out but the moved lanes' requests.
				var yaml strings.Builder
				if err := Write(&yaml, p, "yaml"); err != nil {
					t.Fatal(err)
				}
				if strings.Count(yaml.String(), "kubectl") != len(c.wantMoved) || !strings.Contains(yaml.String(), "keeps today's layout") {
					t.Errorf("a kept pool's YAML, want %d patches:\n%s", len(c.wantMoved), yaml.String())
				}
				for _, lane := range c.wantMoved {
					if !strings.Contains(yaml.String(), "# "+lane+": time-slicing → nvidia.com/gpu") {
						t.Errorf("no patch of %s to a whole GPU:\n%s", lane, yaml.String())
					}
				}
			}
		})
	}
}
