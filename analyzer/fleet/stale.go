package fleet

import (
	"cmp"
	"slices"
	"time"
)

// StaleAfter is how long before the window's last step a node's freshest
// series may have been last seen and the node still be judged at the
// window's end. It is the PromQL engine's lookback (Prometheus's
// --query.lookback-delta default, and the embedded engine's): a series
// without a sample for that long is absent to the engine, so past it the
// window's end shows nothing of the node, not an empty node. It is 5 to
// 20 scrape intervals (15s to 1m), so a late or failed scrape is not
// taken for data that stopped. Without staleness markers (Prometheus
// itself down, a backfill) a series is seen for the lookback past its
// last sample, so such a node's data stopped at least twice this long
// before the end; with them (a failed scrape of the exporter) just over
// this long.
const StaleAfter = 5 * time.Minute

// NodeRef names a node of the fleet.
type NodeRef struct {
	Cluster string `json:",omitempty"`
	Node    string
}

// NodeSeen is when a node's data was last seen.
type NodeSeen struct {
	NodeRef
	// SinceLastSeen is from the last step any of its GPUs was seen at (or,
	// for a node with no GPU series, any of its allocations) to the
	// window's last step: the node's freshest series.
	SinceLastSeen time.Duration
	// LastSeen is that step.
	LastSeen time.Time
}

// LastStep is the time of the window's last step, the instant "now" is
// for a window's figures; the zero time for a window of no step.
func (w Window) LastStep() time.Time {
	first, steps := w.Grid()
	if steps == 0 {
		return time.Time{}
	}
	return first.Add(time.Duration(steps-1) * w.Step)
}

// NodesSeen is each node's freshest series, by node. A node's GPU series
// say whether its exporter reports; only a node with none (allocation
// series alone) is judged by its allocations, since a finished pod's
// allocation stops while its node goes on.
func (r *Result) NodesSeen() map[NodeRef]time.Duration {
	out := map[NodeRef]time.Duration{}
	fresher := func(n NodeRef, d time.Duration) {
		if old, ok := out[n]; !ok || d < old {
			out[n] = d
		}
	}
	for _, g := range r.GPUs {
		fresher(NodeRef{g.Cluster, g.Node}, g.SinceLastSeen)
	}
	gpuNodes := make(map[NodeRef]bool, len(out))
	for n := range out {
		gpuNodes[n] = true
	}
	for _, a := range r.Allocations {
		if n := (NodeRef{a.Cluster, a.Node}); !gpuNodes[n] {
			fresher(n, a.SinceLastSeen)
		}
	}
	return out
}

// Stale are the nodes whose data stopped more than StaleAfter before the
// window's last step, the longest stopped first, then by cluster and
// node: what holds their GPUs now is not in the data, and they are judged
// at their last sample. None when the data reaches the window's end.
func (r *Result) Stale() []NodeSeen {
	last := r.Window.LastStep()
	var out []NodeSeen
	for n, d := range r.NodesSeen() {
		if d > StaleAfter {
			out = append(out, NodeSeen{NodeRef: n, SinceLastSeen: d, LastSeen: last.Add(-d)})
		}
	}
	slices.SortFunc(out, func(x, y NodeSeen) int {
		return cmp.Or(cmp.Compare(y.SinceLastSeen, x.SinceLastSeen), cmp.Compare(x.Cluster, y.Cluster), cmp.Compare(x.Node, y.Node))
	})
	return out
}
