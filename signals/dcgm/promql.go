package dcgm

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/signals"
)

// renames maps dcgm-exporter's labels onto signals', in the order Norm
// applies them.
var renames = [][2]string{
	{signals.LabelNode, LabelHostnameOld}, {signals.LabelNode, LabelHostname},
	{signals.LabelUUID, LabelUUID}, {signals.LabelModel, LabelModel},
	{signals.LabelGPUInstance, LabelGPUInstance}, {signals.LabelMIGProfile, LabelMIGProfile},
}

// Norm renames dcgm-exporter's labels to signals' (node, uuid, model,
// gpu_instance, mig_profile). Whichever host label spelling is set wins;
// with neither (--no-hostname) node is empty. Renaming from a label that
// is absent yields an empty, that is no, label. gpu keeps its name.
func Norm(expr string) string {
	for _, r := range renames {
		regex := "(.*)"
		if r[0] == signals.LabelNode {
			// Never blank a node set by the other spelling.
			regex = "(.+)"
		}
		expr = fmt.Sprintf(`label_replace(%s, %q, "$1", %q, %q)`, expr, r[0], r[1], regex)
	}
	return expr
}

// Matchers that tell whole GPUs from MIG GPU instances: dcgm-exporter
// writes GPU_I_PROFILE and GPU_I_ID on instances only.
const (
	WholeGPU = LabelMIGProfile + `=""`
	AnyMIG   = LabelMIGProfile + `!=""`
)

// Profile matches the GPU instances of n compute slices.
func Profile(n int) string { return signals.ProfileSlices(LabelMIGProfile, n) }

// Sel selects one field's series, under every name the field had
// (eras.go), in its base unit. Matchers are raw, in dcgm-exporter's
// label names or the store's ("cluster=~\"$cluster\""), comma-separated;
// Node, Namespace and Pod are regexes on the normalised labels, empty for
// any (a dashboard's variables).
type Sel struct {
	Field, Matchers      string
	Node, Namespace, Pod string
	// Offset, a PromQL duration, moves every selector back in time.
	Offset string
	// Around, a PromQL duration, selects instead the series seen both
	// within Around before and within Around after the evaluation
	// (Held), at their last sample before it; Offset is ignored.
	Around string
	// Presence selects every name in one selector, unscaled, for a reader
	// of which series exist and not of their values: shorter, which keeps
	// the allocation within VictoriaMetrics' query length.
	Presence bool
	// Fields adds the names a --dcgm-fields map gives the field.
	Fields *FieldMap
}

// On is a Sel of field with raw matchers.
func On(field string, matchers ...string) Sel {
	return Sel{Field: field, Matchers: strings.Join(nonEmpty(matchers), ", ")}
}

// Presence is a presence Sel (Sel.Presence) of field.
func Presence(field string, matchers ...string) Sel {
	s := On(field, matchers...)
	s.Presence = true
	return s
}

func nonEmpty(s []string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// selector is the field's selector with the extra matcher m. A field of
// several names is a union, newest first, each scaled to the base unit
// (the union keeps one series where a node upgraded inside the lookback
// reports both, as `or` ignores the metric name); a presence selector
// matches the names by a regex. A node filter reads either host label
// spelling, so it is a union of one selector per spelling.
func (s Sel) selector(m ...string) string {
	base := nonEmpty(append([]string{s.Matchers}, m...))
	spell := s.Fields.spellingsOf(s.Field)
	if s.Field == "" {
		spell = []Spelling{{Scale: 1}}
	}
	one := func(extra ...string) string {
		matchers := append(append([]string{}, base...), extra...)
		var alts []string
		pick := func(name string, matchers []string) string {
			out := name
			if len(matchers) > 0 {
				out += "{" + strings.Join(matchers, ", ") + "}"
			}
			if s.Around != "" {
				r := "[" + s.Around + "]"
				return "(last_over_time(" + out + r + ") and last_over_time(" + out + r + " offset -" + s.Around + "))"
			}
			if s.Offset != "" {
				out += " offset " + s.Offset
			}
			return out
		}
		if (s.Presence || sameScale(spell)) && len(spell) > 1 {
			return pick("", append([]string{`__name__=~"` + namesRegex(s.Fields, s.Field) + `"`}, matchers...))
		}
		for _, sp := range spell {
			alts = append(alts, pick(sp.Name, matchers)+scaled(sp.Scale))
		}
		if len(alts) == 1 {
			return alts[0]
		}
		return "(" + strings.Join(alts, " or ") + ")"
	}
	if s.Node == "" {
		return one()
	}
	var alts []string
	for _, h := range []string{LabelHostnameOld, LabelHostname} {
		alts = append(alts, one(fmt.Sprintf("%s=~%q", h, s.Node)))
	}
	return "(" + strings.Join(alts, " or ") + ")"
}

// sameScale says every spelling is in the base unit already: one regex
// over the names reads the same values as their union, shorter. The
// readers aggregate per GPU or tenant (max), which takes one of two
// series a node upgraded without staleness markers shows for a lookback.
func sameScale(spell []Spelling) bool {
	for _, sp := range spell {
		if sp.Scale != 1 {
			return false
		}
	}
	return true
}

// scaled is the operation that turns a spelling's values into the base
// unit: a division where the factor is a whole fraction, so that a
// percent reads exactly as the division by 100 it always was.
func scaled(f float64) string {
	switch {
	case f == 1:
		return ""
	case f < 1 && 1/f == math.Trunc(1/f):
		return " / " + strconv.FormatFloat(1/f, 'f', -1, 64)
	}
	return " * " + strconv.FormatFloat(f, 'f', -1, 64)
}

func (s Sel) tenant(prefix string) []string {
	return signals.Scope{Namespace: s.Namespace, Pod: s.Pod}.TenantMatchers(prefix)
}

// RangeOf is fn over the trailing range rng of field, under each of its
// names, unscaled: for a function whose answer does not depend on the
// unit (changes, last_over_time read for presence). Not normalised.
func RangeOf(fn signals.Fn, field, rng string) string {
	var alts []string
	for _, n := range Names(field) {
		alts = append(alts, string(fn)+"("+n+"["+rng+"])")
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return "(" + strings.Join(alts, " or ") + ")"
}

// Any is every series of the selection, normalised.
func Any(s Sel) string { return Norm(s.selector()) }

// Tenants selects the series of the selection that a pod holds, with that
// pod's namespace, pod and container in the plain labels, the rest as
// dcgm-exporter wrote them (Norm them). This is the one rule of which pod
// is a tenant:
//   - a series with exported_pod came through honorLabels: false (the GPU
//     Operator's default ServiceMonitor): its tenant is exported_*, and
//     its pod label is the exporter's;
//   - a series without one has a tenant in pod, unless that pod is the
//     series' own scrape target. That happens to a device no pod holds
//     (dcgm-exporter writes no pod label there) under honorLabels: false,
//     and under honorLabels: true too, which only keeps the exporter's
//     value where it set one. The target is known by Prometheus's own up
//     series, which carries the target's labels; without up (backfilled
//     data, the embedded TSDB) nothing is a target, so a pod named as the
//     GPU Operator's or dcgm-exporter's own chart names the exporter's
//     DaemonSet pods (ExporterPods) is no tenant either.
func Tenants(s Sel) string {
	relabelled := s.selector(append([]string{signals.Exported(LabelPod) + `!=""`}, s.tenant(signals.ExportedPrefix)...)...)
	for _, l := range signals.TenantLabels {
		relabelled = fmt.Sprintf(`label_replace(%s, %q, "$1", %q, "(.*)")`, relabelled, l, signals.Exported(l))
	}
	direct := s.selector(append([]string{signals.Exported(LabelPod) + `=""`, LabelPod + `!=""`, LabelPod + `!~"` + ExporterPods + `"`}, s.tenant("")...)...) +
		` unless on (instance, job, namespace, pod) up{pod!=""}`
	return "(" + relabelled + " or " + direct + ")"
}

// Held is Tenants, plus the pods that held the same GPU both within
// window before and within window after each evaluation.
// dcgm-exporter's one-pod layout (no --kubernetes-virtual-gpus) maps a time-sliced GPU's device ID to one
// pod, the last the kubelet lists, in an order that is not stable
// (dcgm-exporter #340): the pod label moves between the co-tenants from
// scrape to scrape, so each scrape names one of them. A co-tenant is
// seen on both sides of every moment of the sharing; a pod replaced on
// its GPU (a rollout) has no later sample, its successor no earlier one,
// so neither is added, and an ended pod does not linger on data with
// staleness markers. The later side needs a negative offset (Prometheus
// 3, VictoriaMetrics, the embedded engine); at the end of the data it is
// empty and only Tenants remains. A pod is only added where the GPU is
// reported then, so a gap in the scrapes stays a gap.
func Held(s Sel, window string) string {
	around := s
	around.Around = window
	return "(" + Tenants(s) + " or (" + Tenants(around) + " and on (" + LabelUUID + ") " + s.selector() + "))"
}

// FlapWindow is how far apart two sightings of one co-tenant under a
// flapping pod label may be (Held, and the rules' co-tenants): several
// scrapes at the slowest interval in use (5 minutes), so that each of a
// few co-tenants named at random is seen within it.
const FlapWindow = "15m"

// ResolveHost renames, in the result of expr (normalised labels), a node
// that is a dcgm-exporter pod's name to the node kube-state-metrics places
// that pod on (kube_pod_info): without NODE_NAME in its environment
// dcgm-exporter writes the host name in its host label, which in a pod is
// the pod's own name (gpu-operator #472). Other series, and those of a pod
// kube_pod_info lacks, pass unchanged. For rules, which have no cluster
// access of their own; the analyzer renames in Go.
func ResolveHost(expr string) string {
	info := `max by (exporter_pod, node) (label_replace(kube_pod_info{pod=~"` + ExporterPods + `", node!=""}, "exporter_pod", "$1", "pod", "(.*)"))`
	tagged := `label_replace(` + expr + `, "exporter_pod", "$1", "node", "(` + ExporterPods + `)")`
	resolved := `label_replace(` + tagged + ` * on (exporter_pod) group_left (node) ` + info + `, "exporter_pod", "", "", "")`
	known := `label_replace(` + info + `, "node", "$1", "exporter_pod", "(.*)")`
	return "(" + resolved + " or ((" + expr + ") unless on (node) " + known + "))"
}

// ExporterPods matches the pod names of dcgm-exporter's DaemonSet, as the
// GPU Operator (nvidia-dcgm-exporter-*) and dcgm-exporter's own chart
// (dcgm-exporter-*) name them.
const ExporterPods = "(nvidia-)?dcgm-exporter-.*"

// Device selects the series of the selection that no pod holds: without a
// pod label, or whose pod is the series' own scrape target (see Tenants).
func Device(s Sel) string {
	return "(" + s.selector(signals.Exported(LabelPod)+`=""`, LabelPod+`=~"|`+ExporterPods+`"`) + " or (" +
		s.selector(signals.Exported(LabelPod)+`=""`, LabelPod+`!=""`) + ` and on (instance, job, namespace, pod) up{pod!=""}))`
}

// ThrottleReasons is the clocks-event bitmask under any of its names
// (those of m too).
func ThrottleReasons(m *FieldMap, matchers ...string) string {
	sel := Presence(ClockThrottleReasons, matchers...)
	sel.Fields = m
	return sel.selector()
}

// XID is, per group (normalised labels), the last XID code. Since
// 3.3.6-3.4.2 each code is a series of its own (err_code), whose value
// never changes: a reader must aggregate before it looks for a change.
func XID(s Sel, by ...string) string {
	return "max by " + signals.By(by...) + " (" + Any(s) + ")"
}

// XIDEvent is, per group, 1 at each evaluation where the last XID code
// changed to a non-zero one since step ago, else 0: summed over a range,
// the number of events (a lower bound: two within one step are one).
func XIDEvent(s Sel, step string, by ...string) string {
	before := s
	before.Offset = step
	now := XID(s, by...)
	return "(" + now + " != bool " + XID(before, by...) + ") * (" + now + " > bool 0)"
}

// XIDChanged is, per group, the new code at each evaluation where the last
// XID code changed to a non-zero one since step ago, else no series. A
// repeat of the same code is invisible in DCGM's field.
func XIDChanged(s Sel, step string, by ...string) string {
	before := s
	before.Offset = step
	return "(" + XID(s, by...) + " != " + XID(before, by...) + ") > 0"
}
