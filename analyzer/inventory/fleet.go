package inventory

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/tools/clientcmd"
)

// DefaultFleetParallel is how many clusters ReadFleet reads at once when
// not told: each read is a handful of paged lists, so a few clusters at a
// time keep the run short without opening dozens of connections.
const DefaultFleetParallel = 4

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

// ResolveMembers names the clusters of a fleet from a kubeconfig: each of
// specs is "CONTEXT" or "CONTEXT=CLUSTER" (kubectl's key=value form), and
// all adds every context of the kubeconfig, the current one first and the
// others by name; a spec given with all then only renames its context's
// cluster. A spec that is exactly a context's name is that context, so a
// context named with "=" still works; otherwise it splits at its last "=",
// since a cluster label value (a Kubernetes label value) has none. The
// kubeconfig is o.Kubeconfig, else $KUBECONFIG or ~/.kube/config; an
// unknown context, a repeated context or cluster value, or an empty one is
// an error that names the kubeconfig.
func ResolveMembers(o Options, specs []string, all bool) ([]Member, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	files := o.Kubeconfig
	if files == "" {
		files = strings.Join(rules.GetLoadingPrecedence(), string(filepath.ListSeparator))
	}
	kc, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", files, err)
	}
	if len(kc.Contexts) == 0 {
		return nil, fmt.Errorf("kubeconfig %s has no contexts", files)
	}
	names := make([]string, 0, len(kc.Contexts))
	for n := range kc.Contexts {
		names = append(names, n)
	}
	slices.Sort(names)

	var members []Member
	if all {
		if _, ok := kc.Contexts[kc.CurrentContext]; ok {
			members = append(members, Member{Context: kc.CurrentContext, Cluster: kc.CurrentContext})
		}
		for _, n := range names {
			if n != kc.CurrentContext {
				members = append(members, Member{Context: n, Cluster: n})
			}
		}
	}
	seen := map[string]bool{}
	for _, spec := range specs {
		m := Member{Context: spec, Cluster: spec}
		if _, ok := kc.Contexts[spec]; !ok {
			if i := strings.LastIndex(spec, "="); i >= 0 {
				m = Member{Context: spec[:i], Cluster: spec[i+1:]}
			}
		}
		switch {
		case m.Context == "":
			return nil, fmt.Errorf("%q names no context: want CONTEXT or CONTEXT=CLUSTER", spec)
		case m.Cluster == "":
			return nil, fmt.Errorf("%q maps context %s to an empty cluster value", spec, m.Context)
		case kc.Contexts[m.Context] == nil:
			return nil, fmt.Errorf("no context %q in kubeconfig %s (contexts there: %s)", m.Context, files, strings.Join(names, ", "))
		case seen[m.Context]:
			return nil, fmt.Errorf("context %q given twice", m.Context)
		}
		seen[m.Context] = true
		if k := slices.IndexFunc(members, func(x Member) bool { return x.Context == m.Context }); k >= 0 {
			members[k].Cluster = m.Cluster
		} else {
			members = append(members, m)
		}
	}
	clusters := map[string]string{}
	for _, m := range members {
		if other, ok := clusters[m.Cluster]; ok {
			return nil, fmt.Errorf("contexts %q and %q both map to cluster %q: give each its own value with CONTEXT=CLUSTER", other, m.Context, m.Cluster)
		}
		clusters[m.Cluster] = m.Context
	}
	return members, nil
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

// ReadFleet reads each member's cluster through its own context: its own
// rest.Config, credentials, QPS, burst and o.Timeout (NewClient's). At most
// parallel clusters are read at once (0: DefaultFleetParallel). It never
// fails: a context without a usable client, or a cluster that cannot be
// reached, is that cluster's Unavailable inventory.
func ReadFleet(ctx context.Context, o Options, members []Member, parallel int) *Fleet {
	o = o.withDefaults()
	if parallel <= 0 {
		parallel = DefaultFleetParallel
	}
	f := &Fleet{Members: slices.Clone(members), invs: make(map[string]*Inventory, len(members))}
	invs := make([]*Inventory, len(members))
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			mo := o
			mo.Context = m.Context
			mo.Logger = o.Logger.With("cluster", m.Cluster, "context", m.Context)
			c, err := NewClient(mo)
			if err != nil {
				invs[i] = Unavailable(err.Error())
				return
			}
			invs[i] = Read(ctx, c, mo)
		})
	}
	wg.Wait()
	for i, m := range members {
		f.invs[m.Cluster] = invs[i]
	}
	return f
}
