package signals

import (
	"fmt"
	"regexp"
)

// Labels WithWorkload adds to a series with a pod label: the workload the
// pod belongs to, inferred from its name, so that per-workload figures are
// aggregated at each step in the engine (or by the scan, which evaluates
// the same chain).
const (
	LabelWorkload     = "workload"
	LabelWorkloadKind = "workload_kind"
)

// Generated-name alphabets: the random suffix of generateName
// (k8s.io/apimachinery/pkg/util/rand) and what rand.SafeEncodeString
// makes of a pod-template-hash's decimal digits.
const (
	reRandom = `[bcdfghjklmnpqrstvwxz2456789]{5}`
	reHash   = `[456789bcdf]{6,10}`
)

// workloadRules are applied in order, each overriding the ones before when
// its pattern matches the whole pod name: a pod-template hash wins over a
// scheduled minute, which wins over a completion index, and an all-digit
// last segment (a StatefulSet ordinal) wins over everything. This is the
// one rule of a pod's workload by its name: WithWorkload writes it in
// PromQL, WorkloadOf in Go, and the inventory asks WorkloadOf.
var workloadRules = []struct{ kind, re string }{
	{"Job", `(.+)-` + reRandom},
	{"Job", `(.+)-[0-9]+-` + reRandom},
	{"CronJob", `(.+)-[0-9]{8,}-` + reRandom},
	{"Deployment", `(.+)-` + reHash + `-` + reRandom},
	{"StatefulSet", `(.+)-[0-9]+`},
}

// WithWorkload adds the workload and workload_kind labels to every series
// of expr that has a pod label: the pod itself (kind Pod) unless its name
// has a controller's generated form. label_replace leaves a series as it
// is when the pattern does not match, so each rule only touches the pods
// it recognises.
func WithWorkload(expr string) string {
	expr = fmt.Sprintf(`label_replace(label_replace(%s, %q, "$1", "pod", "(.+)"), %q, "Pod", "pod", ".+")`,
		expr, LabelWorkload, LabelWorkloadKind)
	for _, r := range workloadRules {
		expr = fmt.Sprintf(`label_replace(label_replace(%s, %q, %q, "pod", %q), %q, "$1", "pod", %q)`,
			expr, LabelWorkloadKind, r.kind, r.re, LabelWorkload, r.re)
	}
	return expr
}

// workloadRegexps are workloadRules anchored as label_replace anchors them.
var workloadRegexps = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(workloadRules))
	for i, r := range workloadRules {
		out[i] = regexp.MustCompile("^(?s:" + r.re + ")$")
	}
	return out
}()

// WorkloadOf is WithWorkload's label_replace chain on a pod name: the
// workload and its kind, empty for an empty pod.
func WorkloadOf(pod string) (name, kind string) {
	if pod == "" {
		return "", ""
	}
	name, kind = pod, "Pod"
	for i, re := range workloadRegexps {
		if m := re.FindStringSubmatchIndex(pod); m != nil {
			kind = workloadRules[i].kind
			name = string(re.ExpandString(nil, "$1", pod, m))
		}
	}
	return name, kind
}
