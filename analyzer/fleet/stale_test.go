package fleet_test

import (
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// TestNodesSeen guards issue 52's notion of a node's last sample: a node
// with GPU series is as fresh as its freshest GPU, whatever its pods did
// (a Job that finished an hour before the end leaves the node current);
// a node with allocation series alone is as fresh as its freshest
// allocation; a node is stale past fleet.StaleAfter, not at it. On main
// 36bc8ff none of this existed: no GPU had a last sample.
func TestNodesSeen(t *testing.T) {
	end := time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)
	res := &fleet.Result{Window: fleet.Window{Start: end.Add(-24 * time.Hour), End: end, Step: time.Minute}}
	gpu := func(node, uuid string, since time.Duration) fleet.GPU {
		return fleet.GPU{GPUKey: fleet.GPUKey{Node: node, UUID: uuid}, SinceLastSeen: since}
	}
	alloc := func(node, pod string, since time.Duration) fleet.Allocation {
		return fleet.Allocation{AllocationKey: fleet.AllocationKey{Node: node, Pod: pod}, SinceLastSeen: since}
	}
	res.GPUs = []fleet.GPU{
		gpu("fresh", "a", 0), gpu("fresh", "b", 3*time.Hour), // one GPU lost hours ago
		gpu("at-the-lookback", "c", fleet.StaleAfter),
		gpu("stopped", "d", 26*time.Minute), gpu("stopped", "e", 30*time.Minute),
	}
	res.Allocations = []fleet.Allocation{
		alloc("fresh", "job", time.Hour), // a finished Job
		alloc("stopped", "web", 0),       // not read: the node has GPU series
		alloc("pods-only", "a", 20*time.Minute), alloc("pods-only", "b", 40*time.Minute),
	}
	want := map[fleet.NodeRef]time.Duration{
		{Node: "fresh"}: 0, {Node: "at-the-lookback"}: fleet.StaleAfter, {Node: "stopped"}: 26 * time.Minute, {Node: "pods-only"}: 20 * time.Minute,
	}
	got := res.NodesSeen()
	if len(got) != len(want) {
		t.Errorf("NodesSeen %v, want %v", got, want)
	}
	for n, d := range want {
		if got[n] != d {
			t.Errorf("%s: last seen %s before the end, want %s", n.Node, got[n], d)
		}
	}
	stale := res.Stale()
	last := end // the window's last step: end is on the minute grid
	if len(stale) != 2 || stale[0].Node != "stopped" || stale[1].Node != "pods-only" || !stale[0].LastSeen.Equal(last.Add(-26*time.Minute)) {
		t.Errorf("Stale %+v, want stopped (26m) then pods-only (20m)", stale)
	}
}
