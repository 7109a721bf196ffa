package fleet_test

import (
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// TestAbsent guards issue 53 item 3's notion of a GPU gone at the
// window's end: its series stopped past fleet.StaleAfter while another
// GPU of its node (same cluster and node name) reported to the end. A
// node whose every GPU stopped is stale data (Result.Stale), not lost
// GPUs; a GPU seen within the lookback, or one back by the end after a
// gap (SinceLastSeen 0), is not gone. On main 36bc8ff Result.Absent did
// not exist: nothing said how long a GPU had been gone.
func TestAbsent(t *testing.T) {
	end := time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)
	res := &fleet.Result{Window: fleet.Window{Start: end.Add(-7 * 24 * time.Hour), End: end, Step: time.Minute}}
	gpu := func(cluster, node, uuid string, since time.Duration) fleet.GPU {
		return fleet.GPU{GPUKey: fleet.GPUKey{Cluster: cluster, Node: node, UUID: uuid}, Model: "H100", SinceLastSeen: since}
	}
	gone := 44*time.Hour + 42*time.Minute
	res.GPUs = []fleet.GPU{
		gpu("", "node-a", "a0", 0), gpu("", "node-a", "a1", 0), gpu("", "node-a", "a3", gone),
		gpu("", "node-a", "a4", fleet.StaleAfter), // within the lookback: a late scrape
		gpu("", "node-b", "b0", 68*time.Hour), gpu("", "node-b", "b1", 68*time.Hour),
		// The same node name in another cluster, all stopped: its GPUs are
		// not node-a's siblings.
		gpu("east", "node-a", "e0", 2*time.Hour),
		gpu("", "node-c", "c0", 0), gpu("", "node-c", "c1", 3*time.Hour),
	}
	got := res.Absent()
	want := []fleet.Absence{
		{GPUKey: fleet.GPUKey{Node: "node-a", UUID: "a3"}, Model: "H100", LastSeen: end.Add(-gone), For: gone, Reporting: 3},
		{GPUKey: fleet.GPUKey{Node: "node-c", UUID: "c1"}, Model: "H100", LastSeen: end.Add(-3 * time.Hour), For: 3 * time.Hour, Reporting: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("Absent %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].GPUKey != want[i].GPUKey || !got[i].LastSeen.Equal(want[i].LastSeen) || got[i].For != want[i].For || got[i].Reporting != want[i].Reporting {
			t.Errorf("Absent[%d] %+v, want %+v", i, got[i], want[i])
		}
	}
}
