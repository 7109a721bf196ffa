package criteria

// The finding kinds: the names of what the findings judge, shared by the
// analyzer, the rule files, the dashboards and the alerts.
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
