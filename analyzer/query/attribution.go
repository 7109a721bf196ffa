package query

import (
	"fmt"

	"github.com/gpulens/gpulens/analyzer/schema"
)

// attributionQueries read how each GPU's tenants were attributed
// (schema.GPUAttribution), the highest code of the window: the layout that
// says least about the tenants is the one the figures must be read under.
func (a *analysis) attributionQueries(sch schema.Schema) []namedQuery {
	return []namedQuery{
		{name: "gpu attribution", expr: sch.GPUAttribution(a.window()), apply: a.gpuValue(func(g *GPU, v float64) {
			code := int(v)
			g.Attribution = attributionNames[code%schema.AttributionRelabelled]
			g.Relabelled = code >= schema.AttributionRelabelled
		})},
	}
}

// Attributions, the values of GPU.Attribution.
const (
	AttributionPerTenant = "per-tenant"
	// AttributionPerProcess is per-tenant, from dcgm-exporter's 2025
	// per-process series.
	AttributionPerProcess = "per-process"
	AttributionCopies     = "device-copies"
	AttributionOneTenant  = "one-tenant"
)

var attributionNames = map[int]string{
	schema.AttributionPerTenant:  AttributionPerTenant,
	schema.AttributionPerProcess: AttributionPerProcess,
	schema.AttributionCopies:     AttributionCopies,
	schema.AttributionOneTenant:  AttributionOneTenant,
}

// attributionNotes say, for the data-coverage section, which layouts were
// found among the GPUs that had tenants and what each cannot tell.
func (a *analysis) attributionNotes() []string {
	counts := map[string]int{}
	relabelled := 0
	for _, g := range a.res.GPUs {
		if g.Attribution != "" {
			counts[g.Attribution]++
		}
		if g.Relabelled {
			relabelled++
		}
	}
	var notes []string
	if relabelled > 0 {
		notes = append(notes, fmt.Sprintf("%d GPUs' series were relabelled by a ServiceMonitor with honorLabels: false: their tenants were read from exported_pod, exported_namespace and exported_container, and the exporter's own pod is no tenant", relabelled))
	}
	if n := counts[AttributionCopies]; n > 0 {
		notes = append(notes, fmt.Sprintf("%d GPUs report the device's utilization and memory on every tenant (dcgm-exporter --kubernetes-virtual-gpus before 2025): device figures are right, which tenant used them is not known", n))
	}
	if n := counts[AttributionOneTenant]; n > 0 {
		notes = append(notes, fmt.Sprintf("%d GPUs show at most one pod per device (dcgm-exporter without --kubernetes-virtual-gpus): a time-sliced GPU reads as held whole by one arbitrary tenant, and its co-tenants are not seen", n))
	}
	if perProcess := counts[AttributionPerProcess]; perProcess > 0 {
		notes = append(notes, fmt.Sprintf("%d GPUs have per-tenant figures from dcgm-exporter's per-process series (2025 releases, --kubernetes-virtual-gpus): each tenant's utilization and memory are its own processes'; other fields are the device's", perProcess))
	}
	return notes
}
