package findings

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/vocab"
)

// staleFleet is a week of two nodes of two H100s each, every node with
// one GPU held the whole week by a busy pod and one never allocated: at
// its last sample each node has a free GPU beside a held one, so the
// advice for each free GPU is to consolidate (the autoscaler removes
// empty nodes only), and no node is empty. Every series stops at the
// same instant, stopped before the window's last step: SinceLastSeen is
// that long on every GPU and allocation, as the query layer reports a
// store read after its last sample. The window ends stopped after the
// data's end, so the figures (hours, steps) are those of the same data.
func staleFleet(stopped time.Duration) *fleet.Result {
	var allocs []fleet.Allocation
	var gpus []fleet.GPU
	for _, node := range []string{"node-a", "node-b"} {
		held := gpu("GPU-"+node+"-held", h100, "none", 80*GiB)
		held.Node, held.SinceLastSeen = node, stopped
		free := gpu("GPU-"+node+"-free", h100, "", 80*GiB)
		free.Node, free.SinceLastSeen = node, stopped
		free.AllocatedHours, free.UnallocatedHours = 0, 168
		a := alloc("train-"+node, held.UUID, h100, "none", "", 1, 0.9, 0.95, 60*GiB)
		a.Node, a.SinceLastSeen = node, stopped
		gpus, allocs = append(gpus, held, free), append(allocs, a)
	}
	res := result(allocs, gpus)
	res.Window.End = res.Window.End.Add(stopped)
	res.Window.Start = res.Window.Start.Add(stopped)
	return res
}

// advice is a finding's kind, GPU, node and action: what the autoscaler
// is told, without the words around it.
func advice(r *Result) []string {
	var out []string
	for _, f := range r.Findings {
		action := "none"
		if f.Recommendation != nil {
			action = string(f.Recommendation.Action)
		}
		out = append(out, fmt.Sprintf("%s %s %s %s", f.Kind, f.Node, f.GPUUUID, action))
	}
	slices.Sort(out)
	return out
}

// TestDataThatStopsIsNotEmpty guards issue 52: a report read 26 minutes
// after its data's last sample (`make demo`, then `gpulens report` later;
// an exporter or Prometheus down for as long) saw no allocation within
// the lookback of the window's end, called every node empty ("no GPU of
// node-a is held now") and advised scale-down-node-pool for nodes whose
// GPUs were held at their last sample. Judged at the data's last sample,
// the advice is the same as with the window ending there: consolidate
// beside each node's held GPU, never scale down. On main 36bc8ff each
// free GPU got scale-down-node-pool.
func TestDataThatStopsIsNotEmpty(t *testing.T) {
	atEnd := Detect(staleFleet(0), nil, criteria.DefaultConfig(), price.DefaultPrices())
	later := Detect(staleFleet(26*time.Minute), nil, criteria.DefaultConfig(), price.DefaultPrices())
	// The scenario's truth: each node's free GPU is to be consolidated.
	for _, node := range []string{"node-a", "node-b"} {
		want := fmt.Sprintf("%s %s GPU-%s-free %s", vocab.KindUnallocated, node, node, recommend.ActionConsolidate)
		if !slices.Contains(advice(atEnd), want) {
			t.Fatalf("at the data's end, want %q among\n%s", want, strings.Join(advice(atEnd), "\n"))
		}
	}
	if got, want := advice(later), advice(atEnd); !slices.Equal(got, want) {
		t.Errorf("26 minutes after the data's end the advice is\n%s\nwant the same as at its end:\n%s\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"), summaries(later))
	}
	for _, f := range later.Findings {
		if f.Recommendation != nil && f.Recommendation.Action == recommend.ActionScaleDown {
			t.Errorf("scale-down advised from data that stopped: %s", f.Summary)
		}
		if strings.Contains(f.Summary, "held now") && strings.Contains(f.Summary, "no GPU of") {
			t.Errorf("a node called empty for want of samples: %s", f.Summary)
		}
	}
}

// TestNodeWhoseDataStoppedIsUnknown guards issue 52 on a live cluster:
// node-b's exporter stopped 10 minutes before the window's end (its
// scrapes failed, so Prometheus marked its series stale at once) while
// node-a and node-c report to the end. node-b's GPUs sat unallocated all
// week, as did node-c's: node-c, seen empty at the end, is to be scaled
// down; node-b is not known to be empty now, so it gets no advice, and
// the finding and fleet.Result.Stale name it. On main 36bc8ff node-b got
// scale-down-node-pool.
func TestNodeWhoseDataStoppedIsUnknown(t *testing.T) {
	const stopped = 10 * time.Minute
	held := gpu("GPU-a-held", h100, "none", 80*GiB)
	held.Node = "node-a"
	var gpus []fleet.GPU
	gpus = append(gpus, held)
	for _, g := range []struct {
		node, uuid string
		since      time.Duration
	}{{"node-a", "GPU-a-free", 0}, {"node-b", "GPU-b-1", stopped}, {"node-b", "GPU-b-2", stopped}, {"node-c", "GPU-c-1", 0}} {
		free := gpu(g.uuid, h100, "", 80*GiB)
		free.Node, free.SinceLastSeen = g.node, g.since
		free.AllocatedHours, free.UnallocatedHours = 0, 168
		gpus = append(gpus, free)
	}
	a := alloc("train", held.UUID, h100, "none", "", 1, 0.9, 0.95, 60*GiB)
	a.Node = "node-a"
	res := result([]fleet.Allocation{a}, gpus)

	stale := res.Stale()
	if len(stale) != 1 || stale[0].Node != "node-b" || stale[0].SinceLastSeen != stopped ||
		!stale[0].LastSeen.Equal(res.Window.LastStep().Add(-stopped)) {
		t.Errorf("stale nodes %+v, want node-b alone, last seen %s before the window's last step", stale, stopped)
	}

	r := Detect(res, nil, criteria.DefaultConfig(), price.DefaultPrices())
	want := []string{
		fmt.Sprintf("%s node-a GPU-a-free %s", vocab.KindUnallocated, recommend.ActionConsolidate),
		fmt.Sprintf("%s node-b GPU-b-1 none", vocab.KindUnallocated),
		fmt.Sprintf("%s node-b GPU-b-2 none", vocab.KindUnallocated),
		fmt.Sprintf("%s node-c GPU-c-1 %s", vocab.KindUnallocated, recommend.ActionScaleDown),
	}
	if got := advice(r); !slices.Equal(got, want) {
		t.Errorf("advice\n%s\nwant\n%s\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), summaries(r))
	}
	for _, f := range r.Findings {
		if f.Node != "node-b" {
			continue
		}
		if f.Severity != Info || !strings.Contains(f.Summary, "node-b") || !strings.Contains(f.Summary, "cannot be judged") ||
			!strings.Contains(f.Summary, stopped.String()) {
			t.Errorf("node-b's finding %s %q: want info saying its data stops %s before the end and that it cannot be judged", f.Severity, f.Summary, stopped)
		}
	}
}
