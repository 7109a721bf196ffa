package native

import (
	"github.com/gpulens/gpulens/signals"
)

// Scraped through a prometheus-operator ServiceMonitor or PodMonitor with
// honorLabels: false (the GPU Operator's default for dcgm-exporter),
// Prometheus renames every label the exporter set that collides with a
// target label to exported_<name>, and then sets the target's own
// namespace, pod, container, service, endpoint, job and instance. A
// tenant's pod then sits in exported_pod, and pod names the exporter.
//
// Both schemas read tenants through signals' rules (signals.Unexport
// for gpulens's series, which always carry a tenant; dcgm.Tenants for
// dcgm-exporter's), so the same queries give the same answers on
// relabelled and unrelabelled data, without a query of their own.

var tenantLabels = signals.TenantLabels

func unexport(expr string, names ...string) string { return signals.Unexport(expr, names...) }
