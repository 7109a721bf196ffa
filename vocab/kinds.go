package vocab

// The finding kinds: the names of what the findings judge, shared by the
// analyzer (analyzer/criteria re-exports them), serve's alerts and
// series, the rule files and the dashboards. Every kind has an alert in
// Alerts (a test parses this file to keep it so).
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
