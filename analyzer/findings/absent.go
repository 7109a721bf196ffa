package findings

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/vocab"
)

// absenceOf is g's absence at the window's end (fleet.Result.Absent):
// gone while its node's other GPUs kept reporting.
func (d *detector) absenceOf(g fleet.GPU) (fleet.Absence, bool) {
	if d.absent == nil {
		d.absent = map[fleet.GPUKey]fleet.Absence{}
		for _, a := range d.res.Absent() {
			d.absent[a.GPUKey] = a
		}
	}
	a, ok := d.absent[g.GPUKey]
	return a, ok
}

// fellOff says g fell off the bus: XID 79 among its events.
func fellOff(g fleet.GPU) bool {
	return slices.Contains(g.XIDCodes, strconv.Itoa(vocab.XIDFallenOffBus))
}

// absenceClause is how long g has been gone, from when: a GPU lost at
// the window's end has been lost since it was last seen, not for the
// steps its lost state was reported (those are evidence: natively the
// steps gpulens_gpu_up read 0 before the exporter dropped the GPU, on
// dcgm-exporter the steps its last XID read 79 after its readings went
// blank).
func absenceClause(a fleet.Absence) string {
	others := "GPU"
	if a.Reporting > 1 {
		others = "GPUs"
	}
	return fmt.Sprintf("gone since %s, for the window's last %.1f h, while the node's %d other %s kept reporting",
		a.LastSeen.UTC().Format(time.RFC3339), a.For.Hours(), a.Reporting, others)
}

// podBound says g's series may have ended only because its last tenant's
// did: dcgm-exporter's --kubernetes-virtual-gpus before 2025 rebuilds
// every series from the pods, so a GPU no pod holds has none
// (exporter/sim/fleet's DCGMVirtualGPUs), and its absence is as likely a
// GPU no longer held as a lost one. Other layouts, and gpulens-exporter,
// report a GPU no pod holds, so there the absence is the GPU's.
func (d *detector) podBound(g fleet.GPU) bool {
	if d.res.Schema != vocab.SchemaDCGM {
		return false
	}
	for _, a := range d.res.Allocations {
		if a.Cluster == g.Cluster && a.Node == g.Node && a.UUID == g.UUID && a.SinceLastSeen <= g.SinceLastSeen+fleet.StaleAfter {
			return true
		}
	}
	return false
}
