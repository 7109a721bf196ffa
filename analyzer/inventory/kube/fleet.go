package kube

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

// DefaultFleetParallel is how many clusters ReadFleet reads at once when
// not told: each read is a handful of paged lists, so a few clusters at a
// time keep the run short without opening dozens of connections.
const DefaultFleetParallel = 4

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
func ResolveMembers(o Options, specs []string, all bool) ([]inventory.Member, error) {
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

	var members []inventory.Member
	if all {
		if _, ok := kc.Contexts[kc.CurrentContext]; ok {
			members = append(members, inventory.Member{Context: kc.CurrentContext, Cluster: kc.CurrentContext})
		}
		for _, n := range names {
			if n != kc.CurrentContext {
				members = append(members, inventory.Member{Context: n, Cluster: n})
			}
		}
	}
	seen := map[string]bool{}
	for _, spec := range specs {
		m := inventory.Member{Context: spec, Cluster: spec}
		if _, ok := kc.Contexts[spec]; !ok {
			if i := strings.LastIndex(spec, "="); i >= 0 {
				m = inventory.Member{Context: spec[:i], Cluster: spec[i+1:]}
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
		if k := slices.IndexFunc(members, func(x inventory.Member) bool { return x.Context == m.Context }); k >= 0 {
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

// ReadFleet reads each member's cluster through its own context: its own
// rest.Config, credentials, QPS, burst and o.Timeout (NewClient's). At most
// parallel clusters are read at once (0: DefaultFleetParallel). It never
// fails: a context without a usable client, or a cluster that cannot be
// reached, is that cluster's Unavailable inventory.
func ReadFleet(ctx context.Context, o Options, members []inventory.Member, parallel int) *inventory.Fleet {
	o = o.withDefaults()
	if parallel <= 0 {
		parallel = DefaultFleetParallel
	}
	invs := make([]*inventory.Inventory, len(members))
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
				invs[i] = inventory.Unavailable(err.Error())
				return
			}
			invs[i] = Read(ctx, c, mo)
		})
	}
	wg.Wait()
	byCluster := make(map[string]*inventory.Inventory, len(members))
	for i, m := range members {
		byCluster[m.Cluster] = invs[i]
	}
	return inventory.NewFleet(members, byCluster)
}
