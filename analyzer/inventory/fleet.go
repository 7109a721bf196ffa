package inventory

import (
	"fmt"
	"slices"
)

// Member is one cluster of a fleet: the kubeconfig context it is read
// through, with that context's own credentials, and the value of the
// cluster label its metrics carry.
type Member struct {
	Context string
	// Cluster is the cluster label's value; by default the context's name.
	Cluster string
}

func (m Member) String() string {
	if m.Cluster == m.Context {
		return "cluster " + m.Cluster
	}
	return fmt.Sprintf("cluster %s (context %s)", m.Cluster, m.Context)
}

// Fleet is the inventories of several clusters, one per cluster label
// value, each read through its own context. A cluster that could not be
// read degrades only its own inventory (Unavailable, its reason in
// Skipped).
type Fleet struct {
	// Members are the clusters, in the order they were given.
	Members []Member
	invs    map[string]*Inventory
	// unnamed says the fleet is one cluster read the usual way, whose
	// cluster label value is not known (SingleFleet).
	unnamed bool
}

// NewFleet is the fleet of members, each cluster's inventory in invs by
// its cluster label value (kube.ReadFleet reads them).
func NewFleet(members []Member, invs map[string]*Inventory) *Fleet {
	return &Fleet{Members: slices.Clone(members), invs: invs}
}

// SingleFleet is the fleet of one cluster read the usual way, whose
// cluster value is unknown ("").
func SingleFleet(inv *Inventory) *Fleet {
	return &Fleet{Members: []Member{{}}, invs: map[string]*Inventory{"": inv}, unnamed: true}
}

// Of is the inventory cluster c's results are joined with, in a store that
// holds n clusters. A fleet read through contexts gives the context mapped
// to c, or an unavailable inventory saying no context maps to it. A fleet
// of one cluster read the usual way (SingleFleet) is of a cluster whose
// label value is unknown: it serves a store of one cluster, or keeps its
// own reason when it could not be read; where the store holds several it
// would join some cluster's objects with the others' metrics, so each
// cluster is analysed without one, and the reason says how to map them.
func (f *Fleet) Of(c string, n int) *Inventory {
	if !f.unnamed {
		if inv := f.invs[c]; inv != nil {
			return inv
		}
		return Unavailable(fmt.Sprintf("no --context maps to cluster %q (give CONTEXT=%s)", c, c))
	}
	inv := f.invs[""]
	if n <= 1 || inv == nil || !inv.Available {
		return inv
	}
	return Unavailable(fmt.Sprintf("the store holds %d clusters, and the inventory read is of one of them: "+
		"map each cluster to its kubeconfig context with --context CONTEXT=CLUSTER", n))
}

// For is the inventory of the cluster with this label value; nil for a
// cluster not in the fleet.
func (f *Fleet) For(cluster string) *Inventory { return f.invs[cluster] }

// Len is the number of clusters.
func (f *Fleet) Len() int { return len(f.Members) }

// Primary is the cluster whose inventory stands for the fleet where
// results carry no cluster: the first, in the order given, that could be
// reached; the first when none could.
func (f *Fleet) Primary() (Member, *Inventory) {
	for _, m := range f.Members {
		if inv := f.invs[m.Cluster]; inv.Available {
			return m, inv
		}
	}
	return f.Members[0], f.invs[f.Members[0].Cluster]
}

// Unread says, for each cluster whose inventory is degraded, what could
// not be read, naming the cluster: "cluster b (context kind-b): kubernetes
// API unreachable: ...".
func (f *Fleet) Unread() []string {
	var out []string
	for _, m := range f.Members {
		for _, sk := range f.invs[m.Cluster].Skipped {
			out = append(out, m.String()+": "+sk)
		}
	}
	return out
}
