package vocab

import "slices"

// Kind is a finding kind: what a finding judges, as the findings' JSON,
// the gpulens_finding series' kind label and serve's alerts name it.
type Kind string

// The finding kinds: the names of what the findings judge, shared by the
// analyzer (which names them from here, not through a re-export), serve's
// alerts and series, the rule files and the dashboards. Every kind has an
// alert in Alerts (a test parses this file to keep it so).
const (
	KindIdleAllocation   Kind = "idle-allocation"
	KindUnderusedGPU     Kind = "underused-gpu"
	KindTimesliceOOMRisk Kind = "timeslice-oom-risk"
	KindMIGOversized     Kind = "mig-oversized"
	KindMIGUndersized    Kind = "mig-undersized"
	KindTrainingOnShared Kind = "training-on-shared-gpu"
	KindUnallocated      Kind = "unallocated-capacity"
	KindUntaintedNode    Kind = "untainted-gpu-node"
	KindNoGPUQuota       Kind = "namespace-without-gpu-quota"
	KindMixedModels      Kind = "mixed-gpu-models"
	KindGPUErrors        Kind = "gpu-errors"
	KindWorkloadXID      Kind = "workload-xid-errors"
	KindThermal          Kind = "thermal-throttling"
	KindInsufficientData Kind = "insufficient-data"
)

// Kinds are the finding kinds, sorted: what a kind=... selector may name.
// Every kind has an alert (TestEveryKindHasAnAlert), so the alerts list
// them all.
func Kinds() []Kind {
	var out []Kind
	for _, a := range Alerts {
		if a.Kind != "" && !slices.Contains(out, a.Kind) {
			out = append(out, a.Kind)
		}
	}
	slices.Sort(out)
	return out
}
