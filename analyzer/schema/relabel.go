package schema

import "fmt"

// Scraped through a prometheus-operator ServiceMonitor or PodMonitor with
// honorLabels: false (the GPU Operator's default for dcgm-exporter),
// Prometheus renames every label the exporter set that collides with a
// target label to exported_<name>, and then sets the target's own
// namespace, pod, container, service, endpoint, job and instance. A
// tenant's pod then sits in exported_pod, and pod names the exporter.
//
// Both schemas read tenants through the functions below, so the same
// queries give the same answers on relabelled and unrelabelled data,
// without a query of their own.

// tenantLabels are the exporter's labels that name the pod holding a GPU.
var tenantLabels = []string{LabelNamespace, LabelPod, LabelContainer}

// unexport puts exported_<name> back into <name> for each of names where
// the series has it. Used on gpulens's container series, which always
// carry a tenant: the exported_ label, when present, is the one the
// exporter wrote.
func unexport(expr string, names ...string) string {
	for _, n := range names {
		expr = fmt.Sprintf(`label_replace(%s, %q, "$1", %q, "(.+)")`, expr, n, "exported_"+n)
	}
	return expr
}

// dcgmTenants selects the series of metric{matchers} that a pod holds,
// with that pod's namespace, pod and container in the plain labels:
//   - a series with exported_pod came through honorLabels: false: its
//     tenant is exported_*, and its pod label is the exporter's;
//   - a series without one has a tenant in pod, unless that pod is the
//     series' own scrape target. That happens to a device no pod holds
//     (dcgm-exporter writes no pod label there) under honorLabels: false,
//     and under honorLabels: true too, which only keeps the exporter's
//     value where it set one. The target is known by Prometheus's own up
//     series, which carries the target's labels; without up (backfilled
//     data, the embedded TSDB) nothing is a target and nothing is dropped.
func dcgmTenants(metric, matchers string) string {
	sel := func(m string) string {
		if matchers != "" {
			m = matchers + ", " + m
		}
		return metric + "{" + m + "}"
	}
	relabelled := sel(`exported_pod!=""`)
	for _, l := range tenantLabels {
		relabelled = fmt.Sprintf(`label_replace(%s, %q, "$1", %q, "(.*)")`, relabelled, l, "exported_"+l)
	}
	direct := sel(`exported_pod="", pod!=""`) + ` unless on (instance, job, namespace, pod) up{pod!=""}`
	return "(" + relabelled + " or " + direct + ")"
}
