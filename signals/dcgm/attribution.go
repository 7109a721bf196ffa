package dcgm

import (
	"fmt"

	"github.com/gpulens/gpulens/signals"
)

// GPUAttribution implements signals.Schema. Per GPU and step, from FB_USED: a
// device series beside per-pod ones that carry pod_uid is the 2025
// per-process layout; two
// pods or more without one are copies; one pod alone is one tenant. MIG
// instances are each their tenant's own. The window's code is the highest
// that lasted signals.SustainSteps steps in a row: where the data has no staleness
// markers (a backfill, federation, a copy), a pod that ended stays visible
// for the lookback beside the one that replaced it, and one such step must
// not make a whole GPU's week read as copies.
func (s Schema) GPUAttribution(o signals.Over) string {
	return o.Apply(signals.MaxOverTime, fmt.Sprintf("min_over_time((%s)[%s:%s])", s.StepAttribution(), signals.SustainRange(o.Step), o.Step))
}

// StepAttribution is the attribution code at one step, for readers that
// apply the sustain rule themselves (query's passes, in Go).
func (s Schema) StepAttribution() string {
	key := s.by(signals.GPUKey)
	pods := "count by " + key + " (count by " + s.by(tenantKey) + " (" + norm(s.wholeTenants()) + "))"
	device := "count by " + key + " (" + norm(s.device(FBUsed, wholeGPU)) + ")"
	// dcgm-exporter writes pod_uid on every per-process series
	// (createPerProcessMetrics, transformation/kubernetes.go:243 at
	// d5e5f51) and on the default layout's only under
	// --kubernetes-enable-pod-uid: a device row beside pod rows without
	// it is the default layout's pod row and the device's own, one of
	// them lingering for the lookback where no staleness marker ended it
	// (a pod arrived or left, in a backfill), not per-process series.
	// No device row has pod_uid, so its series need no tenant rule
	// (Tenants): one selector, which keeps the expression within
	// VictoriaMetrics' -search.maxQueryLen.
	uid := s.on(FBUsed, wholeGPU, LabelPodUID+`!=""`)
	uid.Presence = true
	perProcess := "count by " + key + " (" + norm(uid.selector()) + ")"
	mig := "count by " + key + " (" + norm(s.migTenants(anyMIG)) + ")"
	// Written so that each signal is read once (PromQL has no variables,
	// and VictoriaMetrics refuses queries over 16 KiB by default): a held
	// GPU with a device row and per-process pod rows is per-process, less
	// one (copies) where its pod rows are unmapped; without them, one
	// tenant, plus two (copies) where more than one pod holds it.
	withDevice := fmt.Sprintf("((%d - ((0 * %s + %d) or 0 * %s)) and on %s %s) and on %s %s", signals.AttributionPerProcess, s.unmapped(),
		signals.AttributionPerProcess-signals.AttributionCopies, device, key, perProcess, key, pods)
	withoutDevice := fmt.Sprintf("%d + %d * clamp_max(%s - 1, 1)", signals.AttributionOneTenant, signals.AttributionCopies-signals.AttributionOneTenant, pods)
	return s.withRelabelled(union([]string{
		"(" + withDevice + ") or (" + withoutDevice + ")",
		"0 * " + mig + " + " + itoa(signals.AttributionPerTenant),
	}))
}

// withRelabelled adds AttributionRelabelled to code, per GPU, where
// FB_USED has series with exported_pod.
func (s Schema) withRelabelled(code string) string {
	key := s.by(signals.GPUKey)
	relabelled := "clamp_max(count by " + key + " (" + Any(s.on(FBUsed, `exported_pod!=""`)) + "), 1) * " + itoa(signals.AttributionRelabelled)
	return "(" + code + ") + on " + key + " (" + relabelled + " or 0 * (" + code + "))"
}
