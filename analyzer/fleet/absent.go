package fleet

import (
	"cmp"
	"slices"
	"time"
)

// Absence is a GPU whose series stopped more than StaleAfter before the
// window's last step while its node's other GPUs kept reporting: the node
// runs, and is billed, without it. A GPU that fell off the bus (XID 79)
// and was not reset is one; so is one lost without an XID, which
// dcgm-exporter stops reporting (its readings come back blank). A node
// whose every GPU stopped is not here but in Stale: its data stopped, and
// what became of its GPUs is unknown.
type Absence struct {
	GPUKey
	Model string
	// LastSeen is the last step the GPU was reported at, and For the time
	// from it to the window's last step: how long it has been gone.
	LastSeen time.Time
	For      time.Duration
	// Reporting is how many of the node's other GPUs were reported at the
	// window's end.
	Reporting int
}

// Absent are the GPUs gone before the window's end from nodes that kept
// reporting, the longest gone first, then by cluster, node and UUID.
func (r *Result) Absent() []Absence {
	reporting := map[NodeRef]int{}
	for _, g := range r.GPUs {
		if g.SinceLastSeen <= StaleAfter {
			reporting[NodeRef{g.Cluster, g.Node}]++
		}
	}
	last := r.Window.LastStep()
	var out []Absence
	for _, g := range r.GPUs {
		n := reporting[NodeRef{g.Cluster, g.Node}]
		if g.SinceLastSeen <= StaleAfter || n == 0 {
			continue
		}
		out = append(out, Absence{GPUKey: g.GPUKey, Model: g.Model, LastSeen: last.Add(-g.SinceLastSeen), For: g.SinceLastSeen, Reporting: n})
	}
	slices.SortFunc(out, func(x, y Absence) int {
		return cmp.Or(cmp.Compare(y.For, x.For), cmp.Compare(x.Cluster, y.Cluster), cmp.Compare(x.Node, y.Node), cmp.Compare(x.UUID, y.UUID))
	})
	return out
}
