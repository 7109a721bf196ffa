package vocab

import "slices"

// The finding kinds: the names of what the findings judge, shared by the
// analyzer (which names them from here, not through a re-export), serve's
// alerts and series, the rule files and the dashboards. Every kind has an
// alert in Alerts (a test parses this file to keep it so).
const (
	KindIdleAllocation   = "idle-allocation"
	KindUnderusedGPU     = "underused-gpu"
	KindTimesliceOOMRisk = "timeslice-oom-risk"
	KindMIGOversized     = "mig-oversized"
	KindMIGUndersized    = "mig-undersized"
	KindTrainingOnShared = "training-on-shared-gpu"
	KindUnallocated      = "unallocated-capacity"
	KindUntaintedNode    = "untainted-gpu-node"
	KindNoGPUQuota       = "namespace-without-gpu-quota"
	KindMixedModels      = "mixed-gpu-models"
	KindGPUErrors        = "gpu-errors"
	KindWorkloadXID      = "workload-xid-errors"
	KindThermal          = "thermal-throttling"
	KindInsufficientData = "insufficient-data"
)

// Kinds are the finding kinds, sorted: what a kind=... selector may name.
// Every kind has an alert (TestEveryKindHasAnAlert), so the alerts list
// them all.
func Kinds() []string {
	var out []string
	for _, a := range Alerts {
		if a.Kind != "" && !slices.Contains(out, a.Kind) {
			out = append(out, a.Kind)
		}
	}
	slices.Sort(out)
	return out
}
