package findings

import "github.com/gpulens/gpulens/analyzer/query"

// copied says whether the exporter gave every tenant of the GPU the
// device's own figures (query.AttributionCopies), so that which tenant
// used the GPU is not known. Decided per GPU from the data, not by
// exporter: dcgm-exporter's 2025 per-process series are each tenant's own.
func (d *detector) copied(node, uuid string) bool {
	g, ok := d.gpus[query.GPUKey{Node: node, UUID: uuid}]
	return ok && g.Attribution == query.AttributionCopies
}

// copiedAny says whether any GPU of the workload had its figures copied.
func (d *detector) copiedAny(w query.Workload) bool {
	for _, g := range w.GPUs {
		if d.copied(g.Node, g.UUID) {
			return true
		}
	}
	return false
}
