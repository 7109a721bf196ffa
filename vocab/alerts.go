package vocab

import "strings"

// AlertPrefix starts every alert name, the rules' and gpulens serve's
// (monitoring-mixins: one common prefix), so that routes and silences
// match all of gpulens's alerts with alertname=~"GPULens.*".
const AlertPrefix = "GPULens"

// RunbookBase is where runbook_url anchors point: docs/runbooks.md on the
// repository's default branch.
const RunbookBase = "https://github.com/gpulens/gpulens/blob/main/docs/runbooks.md"

// RuleFiles says which generated rule files carry an alert.
type RuleFiles uint8

const (
	// NativeRules is alerts/gpulens.rules.yml, over gpulens-exporter's series.
	NativeRules RuleFiles = 1 << iota
	// DCGMRules is alerts/dcgm-exporter.rules.yml, over dcgm-exporter's.
	DCGMRules

	// BothRules is an alert both rule files carry.
	BothRules = NativeRules | DCGMRules
)

// AlertName is an alertname, prefix included.
type AlertName string

// The alert names, written out in full (not AlertPrefix + ...) so that a
// grep for one finds this line, its rule in the committed rule files and
// serve's use alike, as node-mixin's are. TestAlertsAreOneList holds them
// to the prefix. Initialisms are upper case (GPU, MIG, OOM, XID), in rule
// and serve alerts alike. A rule and a finding that judge the same
// condition with the same threshold share one name.
const (
	AlertGPUAllocatedIdle          AlertName = "GPULensGPUAllocatedIdle"
	AlertSharedGPUMemoryNearlyFull AlertName = "GPULensSharedGPUMemoryNearlyFull"
	AlertSharedGPUMemoryGrowing    AlertName = "GPULensSharedGPUMemoryGrowing"
	AlertGPULost                   AlertName = "GPULensGPULost"
	AlertGPUXIDErrors              AlertName = "GPULensGPUXIDErrors"
	AlertGPUThermalThrottling      AlertName = "GPULensGPUThermalThrottling"
	AlertGPUPowerThrottling        AlertName = "GPULensGPUPowerThrottling"
	AlertGPUECCUncorrectable       AlertName = "GPULensGPUECCUncorrectable"
	AlertGPURowRemapFailed         AlertName = "GPULensGPURowRemapFailed"
	AlertExporterDown              AlertName = "GPULensExporterDown"
	AlertExporterStale             AlertName = "GPULensExporterStale"
	AlertAttributionDown           AlertName = "GPULensAttributionDown"
	AlertAttributionAllocationOnly AlertName = "GPULensAttributionAllocationOnly"
	AlertCriticalFinding           AlertName = "GPULensCriticalFinding"
	// gpulens serve's alerts on itself, from its own series.
	AlertServeStale                AlertName = "GPULensServeStale"
	AlertServeNotificationsFailing AlertName = "GPULensServeNotificationsFailing"
	AlertServeStateNotWritten      AlertName = "GPULensServeStateNotWritten"

	AlertUnderusedGPU             AlertName = "GPULensUnderusedGPU"
	AlertTimesliceOOMRisk         AlertName = "GPULensTimesliceOOMRisk"
	AlertMIGOversized             AlertName = "GPULensMIGOversized"
	AlertMIGUndersized            AlertName = "GPULensMIGUndersized"
	AlertTrainingOnSharedGPU      AlertName = "GPULensTrainingOnSharedGPU"
	AlertUnallocatedCapacity      AlertName = "GPULensUnallocatedCapacity"
	AlertUntaintedGPUNode         AlertName = "GPULensUntaintedGPUNode"
	AlertNamespaceWithoutGPUQuota AlertName = "GPULensNamespaceWithoutGPUQuota"
	AlertMixedGPUModels           AlertName = "GPULensMixedGPUModels"
	AlertGPUErrors                AlertName = "GPULensGPUErrors"
	AlertWorkloadXIDErrors        AlertName = "GPULensWorkloadXIDErrors"
	AlertInsufficientData         AlertName = "GPULensInsufficientData"
)

// Alert is one alert gpulens can send.
type Alert struct {
	Name AlertName
	// Rules are the rule files that carry it; 0 for an alert only serve
	// sends.
	Rules RuleFiles
	// Kind is the finding kind whose findings gpulens serve sends as this
	// alert; "" for an alert only the rules raise.
	Kind Kind
}

// RunbookURL is the alert's section of docs/runbooks.md.
func (a Alert) RunbookURL() string { return RunbookURL(a.Name) }

// RunbookURL is the section of docs/runbooks.md about alert name: GitHub
// anchors a heading by its lower-cased text.
func RunbookURL(name AlertName) string { return RunbookBase + "#" + strings.ToLower(string(name)) }

// Alerts is every alert gpulens sends, from the rule files and from serve:
// the one list both are checked against (analyzer/serve's tests read the
// committed rule files).
var Alerts = []Alert{
	{Name: AlertGPUAllocatedIdle, Rules: BothRules, Kind: KindIdleAllocation},
	{Name: AlertSharedGPUMemoryNearlyFull, Rules: BothRules},
	{Name: AlertSharedGPUMemoryGrowing, Rules: BothRules},
	{Name: AlertGPULost, Rules: BothRules},
	{Name: AlertGPUXIDErrors, Rules: BothRules},
	{Name: AlertGPUThermalThrottling, Rules: BothRules, Kind: KindThermal},
	{Name: AlertGPUPowerThrottling, Rules: BothRules},
	{Name: AlertGPUECCUncorrectable, Rules: BothRules},
	{Name: AlertGPURowRemapFailed, Rules: BothRules},
	{Name: AlertExporterDown, Rules: BothRules},
	{Name: AlertExporterStale, Rules: BothRules},
	{Name: AlertAttributionDown, Rules: NativeRules},
	{Name: AlertAttributionAllocationOnly, Rules: NativeRules},
	{Name: AlertCriticalFinding, Rules: BothRules},
	{Name: AlertServeStale, Rules: BothRules},
	{Name: AlertServeNotificationsFailing, Rules: BothRules},
	{Name: AlertServeStateNotWritten, Rules: BothRules},

	{Name: AlertUnderusedGPU, Kind: KindUnderusedGPU},
	{Name: AlertTimesliceOOMRisk, Kind: KindTimesliceOOMRisk},
	{Name: AlertMIGOversized, Kind: KindMIGOversized},
	{Name: AlertMIGUndersized, Kind: KindMIGUndersized},
	{Name: AlertTrainingOnSharedGPU, Kind: KindTrainingOnShared},
	{Name: AlertUnallocatedCapacity, Kind: KindUnallocated},
	{Name: AlertUntaintedGPUNode, Kind: KindUntaintedNode},
	{Name: AlertNamespaceWithoutGPUQuota, Kind: KindNoGPUQuota},
	{Name: AlertMixedGPUModels, Kind: KindMixedModels},
	{Name: AlertGPUErrors, Kind: KindGPUErrors},
	{Name: AlertWorkloadXIDErrors, Kind: KindWorkloadXID},
	{Name: AlertInsufficientData, Kind: KindInsufficientData},
}

// AlertOf is the alert gpulens serve sends for findings of kind, and
// whether the list has one.
func AlertOf(kind Kind) (Alert, bool) {
	for _, a := range Alerts {
		if a.Kind == kind && kind != "" {
			return a, true
		}
	}
	return Alert{}, false
}
