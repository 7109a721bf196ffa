package signals

import (
	"fmt"
	"slices"
	"strings"
)

// Scope is what one reader adds to every expression a Schema writes, so
// that the analysis, the dashboards and the rules read one implementation
// of each signal: nothing for a plain analysis; a cluster's matcher for a
// scoped one; Grafana's $cluster, $node, $namespace and $pod variables,
// and the GPU's index for legends, for the dashboards. A Scope is a value
// of strings, so a Schema holding one stays comparable.
type Scope struct {
	// Matchers are raw label matchers, comma-separated, added to every
	// selector, in the store's label names: `cluster=~"$cluster"`.
	Matchers string
	// Node is a regex the normalised node must match, whatever the
	// exporter calls its host label; empty for every node.
	Node string
	// Namespace and Pod are regexes a tenant must match, on the signals
	// that have one (allocation, utilisation, memory used, claims).
	Namespace, Pod string
	// Keep are labels, comma-separated, that every aggregation keeps
	// beside the signal's own: the GPU's index ("gpu") that the
	// dashboards' legends name. The analysis keys on the UUID alone. They
	// must be constant per GPU: joins between a GPU's series match on them.
	Keep string
	// KeepTenant are labels, comma-separated, that every aggregation by
	// tenant (one that keeps the pod) keeps besides: a team label that
	// relabelling put on the series ("$team_label"). Constant per pod.
	KeepTenant string
}

// By is a grouping clause of labels and the scope's Keep.
func (sc Scope) By(labels ...string) string {
	out := append([]string{}, labels...)
	if sc.Keep != "" {
		out = append(out, strings.Split(sc.Keep, ", ")...)
	}
	if sc.KeepTenant != "" && slices.Contains(labels, LabelPod) {
		out = append(out, strings.Split(sc.KeepTenant, ", ")...)
	}
	return By(out...)
}

// Labels are labels and the scope's Keep, for an aggregation's grouping
// built elsewhere (MIGTotal).
func (sc Scope) Labels(labels ...string) []string {
	if sc.Keep == "" {
		return labels
	}
	return append(append([]string{}, labels...), strings.Split(sc.Keep, ", ")...)
}

// NodeMatcher is the matcher of Node on a label called label; "" without.
func (sc Scope) NodeMatcher(label string) string {
	if sc.Node == "" {
		return ""
	}
	return fmt.Sprintf("%s=~%q", label, sc.Node)
}

// TenantMatchers are the matchers of Namespace and Pod on labels with
// prefix before their names ("" or "exported_").
func (sc Scope) TenantMatchers(prefix string) []string {
	var m []string
	if sc.Namespace != "" {
		m = append(m, fmt.Sprintf("%s=~%q", prefix+LabelNamespace, sc.Namespace))
	}
	if sc.Pod != "" {
		m = append(m, fmt.Sprintf("%s=~%q", prefix+LabelPod, sc.Pod))
	}
	return m
}

// Selector is metric's selector under the scope, in the normalised label
// names (gpulens-exporter's own), with extra matchers; the bare name
// where there are none.
func (sc Scope) Selector(metric string, extra ...string) string {
	var m []string
	for _, x := range append([]string{sc.Matchers, sc.NodeMatcher(LabelNode)}, extra...) {
		if x != "" {
			m = append(m, x)
		}
	}
	if len(m) == 0 {
		return metric
	}
	return metric + "{" + strings.Join(m, ", ") + "}"
}

// Recorded is a recorded series of a per-tenant signal (one a rule file
// records with the labels of the signal it records) under the scope: its
// matchers, node and tenant matchers, on the normalised labels the
// recording has.
func (sc Scope) Recorded(name string) string {
	return sc.Selector(name, sc.TenantMatchers("")...)
}
