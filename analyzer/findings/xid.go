package findings

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// workloadXID reports a GPU's application XIDs (13, 31, 43 and 45:
// schema.ApplicationXID) as the errors of the workload that held the GPU
// when each was raised. They are raised by what a process did (an illegal
// address, a killed kernel): the GPU is healthy, so no drain or reset, but
// the tenant's job likely failed, and the finding names that tenant.
//
// Each event comes with the allocations that held the GPU at the step it
// was first seen (fleet.GPU.WorkloadXIDEvents). Events one workload held
// the GPU for (one pod, or several of its pods at once) are that
// workload's finding, one per workload; events several workloads held it
// for at once (a time-sliced or MPS GPU, several MIG instances: neither
// exporter says which process or instance raised an XID) are one finding
// of the GPU that names every candidate and accuses none; so are those
// where dcgm-exporter shows one tenant per device and the cluster says the
// GPU is time-sliced (readClusterSharing): its other tenants are not seen.
// Events no pod held the GPU for are the GPU's, said as such. Without
// events (a Result made by hand) the finding is the GPU's, as before the
// events were read.
func (d *detector) workloadXID(g fleet.GPU, base func(vocab.Kind, Severity) Finding, subject string) {
	if g.WorkloadXIDErrors <= 0 {
		return
	}
	if len(g.WorkloadXIDEvents) == 0 {
		f := base(vocab.KindWorkloadXID, Info)
		f.Evidence["workload_xid_errors"] = g.WorkloadXIDErrors
		f.Summary = fmt.Sprintf("%s reported %.0f application error(s) (XID %s): a bug or a killed process in the workload, not a GPU fault; check the tenant's logs",
			subject, g.WorkloadXIDErrors, strings.Join(g.WorkloadXIDCodes, ", "))
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
		return
	}
	hidden, hiddenShared := d.clusterShared[g.GPUKey]
	var accused []*xidGroup
	var shared, unheld *xidGroup
	for _, e := range g.WorkloadXIDEvents {
		holders := d.xidHolders(g, e)
		owners := map[xidOwner]bool{}
		for _, h := range holders {
			owners[h.owner] = true
		}
		switch {
		case len(holders) == 0:
			unheld = unheld.with(e, nil)
		case len(owners) > 1 || hiddenShared:
			shared = shared.with(e, holders)
		default:
			i := slices.IndexFunc(accused, func(x *xidGroup) bool { return x.holders[0].owner == holders[0].owner })
			if i < 0 {
				accused = append(accused, nil)
				i = len(accused) - 1
			}
			accused[i] = accused[i].with(e, holders)
		}
	}
	groups := slices.DeleteFunc(append(append([]*xidGroup{}, accused...), shared, unheld), func(x *xidGroup) bool { return x == nil })
	for _, x := range groups {
		// One group has every event: the GPU's count is its own, which
		// counts each event where several fell within one step.
		errors, codes := float64(len(x.events)), x.codes()
		if len(groups) == 1 {
			errors, codes = max(errors, g.WorkloadXIDErrors), g.WorkloadXIDCodes
		}
		f := base(vocab.KindWorkloadXID, Info)
		f.Evidence["workload_xid_errors"] = errors
		what := fmt.Sprintf("%.0f application error(s) (XID %s, %s)", errors, strings.Join(codes, ", "), x.when())
		switch {
		case x == unheld:
			f.Summary = fmt.Sprintf("%s reported %s while no pod was seen holding it: a bug or a killed process in a workload that had just ended "+
				"or is not attributed, not a GPU fault", subject, what)
		case x == shared:
			names := x.names()
			f.Evidence["candidates"] = float64(len(names))
			f.Pods = x.pods()
			if ns := x.namespaces(); len(ns) == 1 {
				f.Namespace = ns[0]
			}
			if hiddenShared {
				f.Summary = fmt.Sprintf("%s reported %s while dcgm-exporter named %s as its tenant, but the cluster shares it (%s, %d replicas) "+
					"and dcgm-exporter shows one pod per device: the data cannot tell which tenant raised it; check the logs of every pod on it then",
					subject, what, strings.Join(names, " and "), hidden.Strategy, hidden.Replicas)
			} else {
				f.Summary = fmt.Sprintf("%s reported %s while %s held it at once: the data cannot tell which of them raised it "+
					"(an XID is the GPU's event, not a process's or a MIG instance's); check each one's logs",
					subject, what, strings.Join(names, " and "))
			}
		default:
			h := x.holders[0]
			f.Namespace, f.Workload, f.WorkloadKind, f.WorkloadSource, f.Team = h.owner.namespace, h.owner.name, h.owner.kind, h.source, h.team
			f.Pods = x.pods()
			if len(f.Pods) == 1 {
				f.Pod = f.Pods[0]
			}
			if c := x.distinct(func(h xidHolder) string { return h.Container }); len(c) == 1 {
				f.Container = c[0]
			}
			if gi := x.distinct(func(h xidHolder) string { return h.GPUInstance }); len(gi) == 1 {
				f.GPUInstance = gi[0]
			}
			f.Summary = fmt.Sprintf("%s raised %s on %s: a bug or a killed process in the workload, not a GPU fault; check its logs then",
				x.names()[0], what, subject)
		}
		d.cost(&f, g.Model, 1, nil)
		d.add(f)
	}
}

// xidOwner is the workload a holder's pod belongs to.
type xidOwner struct{ namespace, kind, name string }

// xidHolder is one allocation that held a GPU when an XID was raised, with
// its pod's owner (workload.go's owner).
type xidHolder struct {
	fleet.XIDHolder
	owner        xidOwner
	source, team string
}

// xidHolders resolves an event's holders to their workloads, as the
// workload rules resolve a workload's: from the cluster's owner
// references, kube-state-metrics' or the pod's name.
func (d *detector) xidHolders(g fleet.GPU, e fleet.XIDEvent) []xidHolder {
	out := make([]xidHolder, 0, len(e.Holders))
	for _, h := range e.Holders {
		w := fleet.Workload{WorkloadKey: fleet.WorkloadKey{Ref: workload.Ref{Namespace: h.Namespace, Container: h.Container}}, Pods: []string{h.Pod}}
		for _, a := range d.res.Allocations {
			if a.Cluster == g.Cluster && a.Node == g.Node && a.UUID == g.UUID && a.Namespace == h.Namespace && a.Pod == h.Pod &&
				a.Container == h.Container && a.GPUInstance == h.GPUInstance {
				w.Kind, w.Name, w.Model, w.MIGProfile = a.WorkloadKind, a.Workload, a.Model, a.MIGProfile
				break
			}
		}
		if w.Name == "" {
			w.Kind, w.Name = "Pod", h.Pod
		}
		owner, team, _, src := d.owner(w)
		out = append(out, xidHolder{XIDHolder: h, owner: xidOwner{h.Namespace, owner.Kind, owner.Name}, source: src, team: team})
	}
	return out
}

// xidGroup is the events of one finding and who held the GPU at them.
type xidGroup struct {
	events  []fleet.XIDEvent
	holders []xidHolder
}

// with is x (nil for a new group) with e and its holders.
func (x *xidGroup) with(e fleet.XIDEvent, holders []xidHolder) *xidGroup {
	if x == nil {
		x = &xidGroup{}
	}
	x.events = append(x.events, e)
	for _, h := range holders {
		if !slices.ContainsFunc(x.holders, func(y xidHolder) bool { return y.XIDHolder == h.XIDHolder }) {
			x.holders = append(x.holders, h)
		}
	}
	return x
}

func (x *xidGroup) codes() []string {
	var out []string
	for _, e := range x.events {
		if !slices.Contains(out, e.Code) {
			out = append(out, e.Code)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		n, _ := strconv.Atoi(a)
		m, _ := strconv.Atoi(b)
		return cmp.Compare(n, m)
	})
	return out
}

// when is the events' time: the step each was first seen at, which it was
// raised within the step before.
func (x *xidGroup) when() string {
	const layout = "2006-01-02 15:04 MST"
	first, last := x.events[0].Time, x.events[len(x.events)-1].Time
	if first.Equal(last) {
		return "seen at " + first.UTC().Format(layout)
	}
	return fmt.Sprintf("seen from %s to %s", first.UTC().Format(layout), last.UTC().Format(layout))
}

func (x *xidGroup) distinct(field func(xidHolder) string) []string {
	var out []string
	for _, h := range x.holders {
		if v := field(h); !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func (x *xidGroup) pods() []string { return x.distinct(func(h xidHolder) string { return h.Pod }) }

func (x *xidGroup) namespaces() []string {
	return x.distinct(func(h xidHolder) string { return h.Namespace })
}

// names are the group's workloads in sentences, sorted: "shop/web", with
// the kind and pods where the workload is not its one pod,
// "shop/web (Deployment, pod web-7d4b9c8f6d-x2x4z)".
func (x *xidGroup) names() []string {
	pods := map[xidOwner][]string{}
	for _, h := range x.holders {
		if !slices.Contains(pods[h.owner], h.Pod) {
			pods[h.owner] = append(pods[h.owner], h.Pod)
		}
	}
	var out []string
	for _, o := range slices.SortedFunc(maps.Keys(pods), func(a, b xidOwner) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.name, b.name), cmp.Compare(a.kind, b.kind))
	}) {
		p := pods[o]
		slices.Sort(p)
		s := o.namespace + "/" + o.name
		switch {
		case len(p) > 1:
			s += fmt.Sprintf(" (%s, pods %s)", o.kind, strings.Join(p, ", "))
		case o.kind != "Pod" || p[0] != o.name:
			s += fmt.Sprintf(" (%s, pod %s)", o.kind, p[0])
		}
		out = append(out, s)
	}
	return out
}
