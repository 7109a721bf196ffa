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

// spelled is one era's series of mt with its labels renamed to the
// normalised ones, in base units.
func spelled(mt Metric, e Era) string {
	sp := mt.Spellings[e]
	expr := sp.Name
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
	by := "max by (" + strings.Join(By(mt.Scope), ", ") + ") (" + expr + ")"
	if mt.Scale == percent {
		return by + " / 100"
	}
	return by
}

// Sel is key's series in both eras, normalised: labels By(scope), values
// in base units. Where both eras are emitted (--legacy-metrics), the
// current one is read.
func Sel(key string) string {
	mt, ok := Lookup(key)
	if !ok {
		panic("hami: unknown metric " + key)
	}
	return "(" + spelled(mt, EraCurrent) + " or " + spelled(mt, EraLegacy) + ")"
}

// SelIn is key's series as HAMi of one era writes them, normalised.
func SelIn(key string, e Era) string {
	mt, ok := Lookup(key)
	if !ok {
		panic("hami: unknown metric " + key)
	}
	return spelled(mt, e)
}

// perDevice divides a per-container quantity by the device's total.
func perDevice(container, device string) string {
	return container + " / on (" + signals.LabelUUID + ") group_left () " + Sel(device)
}

// HeldCores is each container's nvidia.com/gpucores as a share of its
// device (gpucores / 100 on NVIDIA), by namespace, pod, container_index
// and uuid.
func HeldCores() string { return perDevice(Sel(ContainerCoresAllocated), DeviceCores) }

// HeldMemory is each container's nvidia.com/gpumem (gpumem-percentage is
// converted to MiB by the scheduler) as a share of its device's memory,
// by namespace, pod, container_index and uuid.
func HeldMemory() string { return perDevice(Sel(ContainerMemoryAllocated), DeviceMemory) }

// larger is the larger of two shares of the same containers.
func larger(by []string, a, b string) string {
	return "max by (" + strings.Join(by, ", ") + ") (label_replace(" + a + `, "part", "a", "", "") or label_replace(` + b + `, "part", "b", "", ""))`
}

// HeldShare is the share of its GPU a container is charged for on the
// allocation basis: the larger of its cores and memory shares (a tenant
// holding 30% of the cores and 50% of the memory keeps the other tenants
// from half the GPU).
func HeldShare() string { return larger(By(ScopeContainerIndex), HeldCores(), HeldMemory()) }

// UsedCores is each container's SM utilisation of its device, 0..1 (a
// sum over its processes, so it may exceed 1), by namespace, pod,
// container and uuid.
func UsedCores() string { return Sel(ContainerUtilization) }

// UsedMemory is each container's memory used as a share of its device's.
func UsedMemory() string { return perDevice(Sel(ContainerMemoryUsed), DeviceMemory) }

// UsedShare is the share of its GPU a container is charged for on the
// usage basis: the larger of its utilisation and its memory share.
func UsedShare() string { return larger(By(ScopeContainer), UsedCores(), UsedMemory()) }

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
