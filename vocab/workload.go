package vocab

import "regexp"

// Generated-name alphabets: the random suffix of generateName
// (k8s.io/apimachinery/pkg/util/rand) and what rand.SafeEncodeString
// makes of a pod-template-hash's decimal digits.
const (
	reRandom = `[bcdfghjklmnpqrstvwxz2456789]{5}`
	reHash   = `[456789bcdf]{6,10}`
)

// WorkloadRule names pods whose whole name matches Pattern as a workload
// of kind Kind, named by Pattern's first group.
type WorkloadRule struct{ Kind, Pattern string }

// WorkloadRules are applied in order, each overriding the ones before when
// its pattern matches the whole pod name: a pod-template hash wins over a
// scheduled minute, which wins over a completion index, and an all-digit
// last segment (a StatefulSet ordinal) wins over everything. This is the
// one rule of a pod's workload by its name: signals.WithWorkload writes it
// in PromQL, WorkloadOf in Go, and the inventory asks WorkloadOf.
var WorkloadRules = []WorkloadRule{
	{"Job", `(.+)-` + reRandom},
	{"Job", `(.+)-[0-9]+-` + reRandom},
	{"CronJob", `(.+)-[0-9]{8,}-` + reRandom},
	{"Deployment", `(.+)-` + reHash + `-` + reRandom},
	{"StatefulSet", `(.+)-[0-9]+`},
}

// workloadRegexps are WorkloadRules anchored as label_replace anchors them.
var workloadRegexps = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(WorkloadRules))
	for i, r := range WorkloadRules {
		out[i] = regexp.MustCompile("^(?s:" + r.Pattern + ")$")
	}
	return out
}()

// WorkloadOf is signals.WithWorkload's label_replace chain on a pod name:
// the workload and its kind, empty for an empty pod.
func WorkloadOf(pod string) (name, kind string) {
	if pod == "" {
		return "", ""
	}
	name, kind = pod, "Pod"
	for i, re := range workloadRegexps {
		if m := re.FindStringSubmatchIndex(pod); m != nil {
			kind = WorkloadRules[i].Kind
			name = string(re.ExpandString(nil, "$1", pod, m))
		}
	}
	return name, kind
}
