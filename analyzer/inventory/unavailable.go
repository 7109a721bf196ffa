package inventory

import "time"

// Unavailable is the inventory of a run without cluster access: every
// consumer falls back to metric labels, and reason says why.
func Unavailable(reason string) *Inventory {
	inv := Empty()
	inv.ReadAt = time.Now()
	inv.Skipped = []string{reason}
	return inv
}

// Empty returns an inventory whose maps are allocated, so that consumers
// can index them without nil checks whether or not the cluster was read.
func Empty() *Inventory {
	return &Inventory{
		Pods:            map[PodKey]Pod{},
		Namespaces:      map[string]Namespace{},
		Nodes:           map[string]Node{},
		Quotas:          map[string][]Quota{},
		PDBs:            map[string][]PDB{},
		PriorityClasses: map[string]int32{},
		Sharing:         map[string]SharingConfig{},
	}
}
