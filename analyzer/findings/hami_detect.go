package findings

import (
	"fmt"
	"math"

	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/vocab"
)

// The kinds of HAMi findings. One check = one file: hami_gpumem_*.go,
// hami_gpucores.go, hami_overcommit.go.
const (
	KindHAMiGPUMemOversized vocab.Kind = "hami-gpumem-oversized"
	KindHAMiGPUMemOOMRisk   vocab.Kind = "hami-gpumem-oom-risk"
	KindHAMiGPUCoresIdle    vocab.Kind = "hami-gpucores-oversized"
	KindHAMiGPUCoresPinned  vocab.Kind = "hami-gpucores-pinned"
	KindHAMiOvercommit      vocab.Kind = "hami-overcommit"
)

// Thresholds of the HAMi checks.
const (
	// hamiHeadroom is the memory kept above the peak in a new gpumem.
	hamiHeadroom = 1.25
	// hamiMemOversized: the p99 used at most this share of gpumem.
	hamiMemOversized = 0.5
	// hamiMemOOM: a peak at least this share of gpumem is near HAMi-core's
	// out-of-memory error.
	hamiMemOOM = 0.9
	// hamiCoresIdle and hamiCoresPinned: the p95 utilisation at most, and
	// at least, these shares of gpucores (HAMi-core throttles a container
	// to its gpucores: pinned at it means throttled).
	hamiCoresIdle   = 0.5
	hamiCoresPinned = 0.95
	// hamiMinCoverage: a tenant read on fewer of the window's steps is not
	// judged.
	hamiMinCoverage = 0.5
)

// DetectHAMi judges HAMi tenants: each check's findings, priced on the
// tenant's GPU with prices.
func DetectHAMi(tenants []HAMiTenant, prices *price.Prices) []Finding {
	var out []Finding
	for _, t := range tenants {
		if t.Coverage < hamiMinCoverage || t.DeviceBytes <= 0 {
			continue
		}
		for _, check := range []func(HAMiTenant) *Finding{gpumemOversized, gpumemOOMRisk, gpucoresIdle, gpucoresPinned} {
			if f := check(t); f != nil {
				out = append(out, priceHAMi(*f, t.Model, prices))
			}
		}
	}
	for _, f := range overcommitted(tenants) {
		out = append(out, priceHAMi(f, f.Model, prices))
	}
	return out
}

// hamiBase is a finding about t.
func hamiBase(t HAMiTenant, kind vocab.Kind, sev Severity) Finding {
	return Finding{Kind: kind, Severity: sev, Namespace: t.Namespace, Workload: t.Pod, WorkloadKind: "Pod", Pod: t.Pod,
		Container: t.Container, Node: t.Node, GPUUUID: t.GPUUUID, Model: t.Model, Sharing: vocab.SharingHAMi, Confidence: confidence(t.Coverage),
		Evidence: map[string]float64{"gpumem_bytes": float64(t.MemoryMiB) * (1 << 20), "gpucores_ratio": float64(t.CoresPct) / 100,
			"device_memory_bytes": t.DeviceBytes, "memory_p99_bytes": t.MemP99, "memory_peak_bytes": t.MemPeak,
			"utilization_p95_ratio": t.UtilP95, "held_share": t.HeldShare()}}
}

// workloadOf is the tenant's pod, the workload HAMi's series name.
func hamiWorkloadOf(t HAMiTenant) workload.Ref {
	return workload.Ref{Kind: "Pod", Namespace: t.Namespace, Name: t.Pod, Container: t.Container}
}

// priceHAMi sets f's cost: the held share of its GPU, and the
// recommendation's saving, (held − new share) × price × 730 h.
func priceHAMi(f Finding, model string, prices *price.Prices) Finding {
	perHour, err := prices.PerHour(model)
	if err != nil {
		f.Evidence["price_unknown"] = 1
		f.Summary += fmt.Sprintf(" (cost unknown: %v)", err)
		return f
	}
	f.CostKnown = true
	f.MonthlyCostUSD = price.MonthlyCost(f.Evidence["held_share"], perHour)
	if r := f.Recommendation; r != nil {
		f.MonthlySavingsUSD = price.MonthlySavings(r.CurrentShare, r.RecommendedShare, perHour)
	}
	return f
}

// gpumemFor is a gpumem, in MiB, that holds peak with headroom, in whole GiB.
func gpumemFor(peak float64) int64 {
	return int64(math.Ceil(peak*hamiHeadroom/(1<<30))) * 1024
}
