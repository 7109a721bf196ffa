package ledger

import (
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// Absent is a GPU's time gone at the window's end from a node that kept
// reporting (fleet.Result.Absent): a GPU fallen off the bus, or lost
// without an XID, on a node still billed. It is not in the GPU's Hours or
// Cost, which are the time its exporter reported it, since nothing in the
// data says whether the GPU is billed (a cloud bills the node, GPU or
// not; a node drained for repair may be off the bill): it is said here,
// at the GPU's price, for whoever pays the node to add.
type Absent struct {
	// LastSeen is the last step the GPU was reported at; Hours from it to
	// the window's last step.
	LastSeen time.Time `json:"last_seen"`
	Hours    float64   `json:"hours"`
	// Cost is Hours × the GPU's price; 0 where the price is unknown.
	Cost float64 `json:"cost"`
}

// absences are res's absent GPUs, by GPU.
func absences(res *fleet.Result) map[fleet.GPUKey]fleet.Absence {
	out := map[fleet.GPUKey]fleet.Absence{}
	for _, a := range res.Absent() {
		out[a.GPUKey] = a
	}
	return out
}

// absentOf is g's Absent at its price per hour (0: unknown), nil where g
// reported to the window's end or its node stopped with it.
func absentOf(a fleet.Absence, ok bool, pricePerHour float64) *Absent {
	if !ok {
		return nil
	}
	return &Absent{LastSeen: a.LastSeen.UTC(), Hours: a.For.Hours(), Cost: a.For.Hours() * pricePerHour}
}
