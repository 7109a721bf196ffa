package signals

import (
	"fmt"

	"github.com/gpulens/gpulens/vocab"
)

// Labels WithWorkload adds to a series with a pod label: the workload the
// pod belongs to, inferred from its name, so that per-workload figures are
// aggregated at each step in the engine (or by the scan, which evaluates
// the same chain).
const (
	LabelWorkload     = "workload"
	LabelWorkloadKind = "workload_kind"
)

// WithWorkload adds the workload and workload_kind labels to every series
// of expr that has a pod label: the pod itself (kind Pod) unless its name
// has a controller's generated form (vocab.WorkloadRules). label_replace
// leaves a series as it is when the pattern does not match, so each rule
// only touches the pods it recognises.
func WithWorkload(expr string) string {
	expr = fmt.Sprintf(`label_replace(label_replace(%s, %q, "$1", "pod", "(.+)"), %q, "Pod", "pod", ".+")`,
		expr, LabelWorkload, LabelWorkloadKind)
	for _, r := range vocab.WorkloadRules {
		expr = fmt.Sprintf(`label_replace(label_replace(%s, %q, %q, "pod", %q), %q, "$1", "pod", %q)`,
			expr, LabelWorkloadKind, r.Kind, r.Pattern, LabelWorkload, r.Pattern)
	}
	return expr
}
