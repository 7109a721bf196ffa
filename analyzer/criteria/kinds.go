package criteria

import "github.com/gpulens/gpulens/vocab"

// The finding kinds, vocab's (where serve's alerts and the rule files name
// them too), under the names the analyzer has always used.
const (
	KindIdleAllocation   = vocab.KindIdleAllocation
	KindUnderusedGPU     = vocab.KindUnderusedGPU
	KindTimesliceOOMRisk = vocab.KindTimesliceOOMRisk
	KindMIGOversized     = vocab.KindMIGOversized
	KindMIGUndersized    = vocab.KindMIGUndersized
	KindTrainingOnShared = vocab.KindTrainingOnShared
	KindUnallocated      = vocab.KindUnallocated
	KindUntaintedNode    = vocab.KindUntaintedNode
	KindNoGPUQuota       = vocab.KindNoGPUQuota
	KindMixedModels      = vocab.KindMixedModels
	KindGPUErrors        = vocab.KindGPUErrors
	KindWorkloadXID      = vocab.KindWorkloadXID
	KindThermal          = vocab.KindThermal
	KindInsufficientData = vocab.KindInsufficientData
)
