package hami

import (
	"fmt"
	"strings"

	"github.com/gpulens/gpulens/signals"
)

// LabelContainerIndex names, on the scheduler's per-container series, the
// container's index in the pod (its place in the pod's
// hami.io/vgpu-devices-allocated annotation): the scheduler knows no
// container name.
const LabelContainerIndex = "container_index"

// normal maps each normalised label to its HAMi spelling in each era
// ([legacy, current]); several legacy spellings are tried in turn.
var normal = []struct {
	to     string
	legacy []string
	cur    string
}{
	{signals.LabelNamespace, []string{"podnamespace"}, "namespace"},
	{signals.LabelPod, []string{"podname"}, "pod"},
	{signals.LabelContainer, []string{"ctrname"}, "container"},
	{LabelContainerIndex, []string{"containeridx"}, "container_index"},
	{signals.LabelUUID, []string{"deviceuuid"}, "device_uuid"},
	{signals.LabelNode, []string{"nodename", "nodeid"}, "node"},
}

// By is the normalised labels a scope's series keep.
func By(scope string) []string {
	switch scope {
	case ScopeContainer:
		return []string{signals.LabelNamespace, signals.LabelPod, signals.LabelContainer, signals.LabelUUID}
	case ScopeContainerIndex:
		return []string{signals.LabelNamespace, signals.LabelPod, LabelContainerIndex, signals.LabelUUID}
	}
	return []string{signals.LabelUUID}
}

func has(labels []string, l string) bool {
	for _, x := range labels {
		if x == l {
			return true
		}
	}
	return false
}

// Forms are the forms of HAMi's series in a scope (In); the package's
// functions are those of the whole store.
type Forms struct{ sc signals.Scope }

// In is the forms in sc: its Matchers on every selector, its Namespace
// on the tenant's namespace, its Node on the GPU's node (the monitor's
// per-container series name none: they keep the GPUs the scheduler
// places on a matching node), and its KeepTenant kept by every
// per-container form. Keep is not read: HAMi's series have no GPU index
// under the exporters' name.
func In(sc signals.Scope) Forms { return Forms{sc} }

var whole Forms

// by is the labels a scope's series keep in f.
func (f Forms) by(scope string) []string {
	out := By(scope)
	if f.sc.KeepTenant != "" && scope != ScopeDevice {
		out = append(out, strings.Split(f.sc.KeepTenant, ", ")...)
	}
	return out
}

// selector is one era's series of mt in f's scope, its labels as HAMi
// spells them.
func (f Forms) selector(mt Metric, e Era) string {
	sp := mt.Spellings[e]
	var ms []string
	if f.sc.Matchers != "" {
		ms = append(ms, f.sc.Matchers)
	}
	if f.sc.Node != "" {
		for _, n := range normal {
			if n.to != signals.LabelNode {
				continue
			}
			for _, l := range append([]string{n.cur}, n.legacy...) {
				if e == EraCurrent && l != n.cur || e == EraLegacy && l == n.cur {
					continue
				}
				if has(sp.Labels, l) {
					ms = append(ms, fmt.Sprintf("%s=~%q", l, f.sc.Node))
					break
				}
			}
		}
	}
	sel := func(extra ...string) string {
		all := append(append([]string{}, ms...), extra...)
		if len(all) == 0 {
			return sp.Name
		}
		return sp.Name + "{" + strings.Join(all, ", ") + "}"
	}
	if f.sc.Namespace == "" || mt.Scope == ScopeDevice {
		return sel()
	}
	if e == EraLegacy {
		return sel(fmt.Sprintf("podnamespace=~%q", f.sc.Namespace))
	}
	// The tenant's namespace is exported_namespace where a ServiceMonitor
	// with honorLabels: false moved it there, else namespace (spelled).
	return "(" + sel(fmt.Sprintf("exported_namespace=~%q", f.sc.Namespace)) + " or " +
		sel(`exported_namespace=""`, fmt.Sprintf("namespace=~%q", f.sc.Namespace)) + ")"
}

// spelled is one era's series of mt with its labels renamed to the
// normalised ones, in base units.
func (f Forms) spelled(mt Metric, e Era) string {
	sp := mt.Spellings[e]
	expr := f.selector(mt, e)
	for _, n := range normal {
		if !has(By(mt.Scope), n.to) {
			continue
		}
		if e == EraLegacy {
			for _, from := range n.legacy {
				if has(sp.Labels, from) {
					expr = fmt.Sprintf(`label_replace(%s, "%s", "$1", "%s", "(.*)")`, expr, n.to, from)
				}
			}
			continue
		}
		if n.cur != n.to {
			expr = fmt.Sprintf(`label_replace(%s, "%s", "$1", "%s", "(.*)")`, expr, n.to, n.cur)
		} else if has(signals.TenantLabels, n.to) {
			// A ServiceMonitor with honorLabels: false moves HAMi's
			// namespace, pod and container to exported_*; the target's own
			// take their place. Only a set exported_* is read back.
			expr = fmt.Sprintf(`label_replace(%s, "%s", "$1", "exported_%s", "(.+)")`, expr, n.to, n.to)
		}
	}
	by := "max by (" + strings.Join(f.by(mt.Scope), ", ") + ") (" + expr + ")"
	if mt.Scale == percent {
		return by + " / 100"
	}
	return by
}

// Sel is key's series in both eras, normalised: labels By(scope), values
// in base units. Where both eras are emitted (--legacy-metrics), the
// current one is read.
func Sel(key string) string { return whole.Sel(key) }

// Sel is the package's Sel in f's scope.
func (f Forms) Sel(key string) string {
	mt, ok := Lookup(key)
	if !ok {
		panic("hami: unknown metric " + key)
	}
	expr := "(" + f.spelled(mt, EraCurrent) + " or " + f.spelled(mt, EraLegacy) + ")"
	if f.sc.Node != "" && mt.Component == Monitor && mt.Scope != ScopeDevice {
		// The monitor names no node: its GPUs are the scheduler's there.
		expr = "(" + expr + " and on (" + signals.LabelUUID + ") " + f.Sel(DeviceCores) + ")"
	}
	return expr
}

// SelIn is key's series as HAMi of one era writes them, normalised.
func SelIn(key string, e Era) string {
	mt, ok := Lookup(key)
	if !ok {
		panic("hami: unknown metric " + key)
	}
	return whole.spelled(mt, e)
}

// perDevice divides a per-container quantity by the device's total.
func (f Forms) perDevice(container, device string) string {
	return container + " / on (" + signals.LabelUUID + ") group_left () " + f.Sel(device)
}

// HeldCores is each container's nvidia.com/gpucores as a share of its
// device (gpucores / 100 on NVIDIA), by namespace, pod, container_index
// and uuid.
func HeldCores() string { return whole.HeldCores() }

// HeldCores is the package's HeldCores in f's scope.
func (f Forms) HeldCores() string {
	return f.perDevice(f.Sel(ContainerCoresAllocated), DeviceCores)
}

// HeldMemory is each container's nvidia.com/gpumem (gpumem-percentage is
// converted to MiB by the scheduler) as a share of its device's memory,
// by namespace, pod, container_index and uuid.
func HeldMemory() string { return whole.HeldMemory() }

// HeldMemory is the package's HeldMemory in f's scope.
func (f Forms) HeldMemory() string {
	return f.perDevice(f.Sel(ContainerMemoryAllocated), DeviceMemory)
}

// larger is the larger of two shares of the same containers.
func larger(by []string, a, b string) string {
	return "max by (" + strings.Join(by, ", ") + ") (label_replace(" + a + `, "part", "a", "", "") or label_replace(` + b + `, "part", "b", "", ""))`
}

// HeldShare is the share of its GPU a container is charged for on the
// allocation basis: the larger of its cores and memory shares (a tenant
// holding 30% of the cores and 50% of the memory keeps the other tenants
// from half the GPU).
func HeldShare() string { return whole.HeldShare() }

// HeldShare is the package's HeldShare in f's scope.
func (f Forms) HeldShare() string {
	return larger(f.by(ScopeContainerIndex), f.HeldCores(), f.HeldMemory())
}

// UsedCores is each container's SM utilisation of its device, 0..1 (a
// sum over its processes, so it may exceed 1), by namespace, pod,
// container and uuid.
func UsedCores() string { return whole.UsedCores() }

// UsedCores is the package's UsedCores in f's scope.
func (f Forms) UsedCores() string { return f.Sel(ContainerUtilization) }

// UsedMemory is each container's memory used as a share of its device's.
func UsedMemory() string { return whole.UsedMemory() }

// UsedMemory is the package's UsedMemory in f's scope.
func (f Forms) UsedMemory() string { return f.perDevice(f.Sel(ContainerMemoryUsed), DeviceMemory) }

// UsedShare is the share of its GPU a container is charged for on the
// usage basis: the larger of its utilisation and its memory share.
func UsedShare() string { return whole.UsedShare() }

// UsedShare is the package's UsedShare in f's scope.
func (f Forms) UsedShare() string {
	return larger(f.by(ScopeContainer), f.UsedCores(), f.UsedMemory())
}

// UUIDLabels are the GPU UUID labels of the exporters HAMi's series join:
// gpulens-exporter's uuid (signals.LabelUUID) and dcgm-exporter's UUID
// (signals/dcgm LabelUUID; its 1.x-compatible names say uuid). HAMi's
// device_uuid/deviceuuid is NVML's UUID ("GPU-…", the monitor cuts it to
// its 40 characters), the same string both exporters write.
var UUIDLabels = []string{signals.LabelUUID, "UUID"}

// JoinUUID copies a normalised form's uuid to label, the name an
// exporter gives the GPU's UUID, so that `on (label)` joins the two.
func JoinUUID(expr, label string) string {
	if label == signals.LabelUUID {
		return expr
	}
	return fmt.Sprintf(`label_replace(%s, "%s", "$1", "%s", "(.*)")`, expr, label, signals.LabelUUID)
}
