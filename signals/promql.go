package signals

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpulens/gpulens/internal/promdur"
)

// Label names of the normalised series every description produces,
// whatever the exporter calls them.
const (
	LabelNode        = "node"
	LabelNamespace   = "namespace"
	LabelPod         = "pod"
	LabelContainer   = "container"
	LabelUUID        = "uuid"
	LabelGPU         = "gpu" // the GPU's index on its node
	LabelGPUInstance = "gpu_instance"
	LabelModel       = "model"
	LabelMIGProfile  = "mig_profile"
	LabelSharing     = "sharing"
	// The ResourceClaim an allocation was made through (Kubernetes DRA,
	// resource.k8s.io/v1): its namespace and name, and the allocation's
	// result, the driver, pool and device the claim was given.
	LabelClaimNamespace = "claim_namespace"
	LabelClaim          = "claim"
	LabelDriver         = "driver"
	LabelPool           = "pool"
	LabelDevice         = "device"
)

// TenantLabels are the labels that name the pod holding a GPU, in both
// exporters. Scraped through a prometheus-operator ServiceMonitor or
// PodMonitor with honorLabels: false, Prometheus moves each to
// exported_<name> and sets the scrape target's own (the exporter's pod).
var TenantLabels = []string{LabelNamespace, LabelPod, LabelContainer}

// ExportedPrefix is what Prometheus puts before an exporter's label that
// collides with a target label under honor_labels: false.
const ExportedPrefix = "exported_"

// Exported is the name a label takes under honor_labels: false.
func Exported(label string) string { return ExportedPrefix + label }

// By is a PromQL grouping clause: "(a, b)".
func By(labels ...string) string { return "(" + strings.Join(labels, ", ") + ")" }

// Duration writes d as PromQL reads it: the largest units that are exact
// ("1w", "90s"), or milliseconds where d is not whole seconds (a range one
// millisecond short of a step, that Prometheus 2 and 3 read alike).
func Duration(d time.Duration) string { return promdur.Format(d) }

// Union joins expressions whose label sets never overlap.
func Union(exprs ...string) string { return "(" + strings.Join(exprs, ") or (") + ")" }

// SetLabel sets label name to value on every series of expr.
func SetLabel(expr, name, value string) string {
	return fmt.Sprintf(`label_replace(%s, %q, %q, "", "")`, expr, name, value)
}

// Unexport puts exported_<name> back into <name> for each of names where
// the series has it: for series that always carry a tenant, the exported_
// label, when present, is the one the exporter wrote.
func Unexport(expr string, names ...string) string {
	for _, n := range names {
		expr = fmt.Sprintf(`label_replace(%s, %q, "$1", %q, "(.+)")`, expr, n, Exported(n))
	}
	return expr
}

// Itoa is strconv.Itoa, for building expressions.
func Itoa(n int) string { return strconv.Itoa(n) }
