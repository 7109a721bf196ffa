package inventory

import (
	"strings"
	"testing"
)

// TestFleetOf: the inventory each cluster of a store is joined with. A
// fleet of contexts gives each cluster its own, and names a cluster no
// context maps to; the one inventory read the usual way serves a store of
// one cluster only, or keeps its own reason when it was never read.
func TestFleetOf(t *testing.T) {
	read := &Inventory{Available: true}
	named := NewFleet([]Member{{Context: "kind-eu", Cluster: "eu"}}, map[string]*Inventory{"eu": read})
	off := Unavailable("--no-kubernetes was given")
	for _, tt := range []struct {
		name    string
		f       *Fleet
		cluster string
		n       int
		want    *Inventory
		why     string
	}{
		{name: "a context's own", f: named, cluster: "eu", n: 2, want: read},
		{name: "no context maps to it", f: named, cluster: "us", n: 2, why: `no --context maps to cluster "us" (give CONTEXT=us)`},
		{name: "one unnamed cluster", f: SingleFleet(read), cluster: "", n: 1, want: read},
		{name: "one named cluster, the usual read", f: SingleFleet(read), cluster: "eu", n: 1, want: read},
		{name: "several clusters, one inventory", f: SingleFleet(read), cluster: "eu", n: 2, why: "the store holds 2 clusters"},
		{name: "never read keeps its reason", f: SingleFleet(off), cluster: "eu", n: 2, want: off},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.f.Of(tt.cluster, tt.n)
			if tt.want != nil && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if tt.why != "" && (got.Available || len(got.Skipped) != 1 || !strings.Contains(got.Skipped[0], tt.why)) {
				t.Errorf("got %+v, want unavailable for %q", got, tt.why)
			}
		})
	}
}
