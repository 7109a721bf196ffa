// Package signals is the one place where a logical signal (allocation,
// utilisation, memory used and total, sharing, MIG profile, power, XID,
// ...) becomes PromQL. The Schema interface names the signals; each
// exporter implements it once, in its subpackage: signals/native for
// gpulens-exporter's series and signals/dcgm for NVIDIA dcgm-exporter's.
//
// Every expression a Schema returns is an instant-vector PromQL expression
// whose output carries normalised labels: per allocation node, namespace,
// pod, container, uuid, gpu_instance, model, mig_profile and sharing (see
// AllocationLabels); per physical GPU node, uuid and model (GPULabels).
// Readers aggregate them inside the engine and never see exporter-specific
// label names.
//
// The analysis (analyzer/query), the dashboards (dashboards/), the
// recording and alerting rules (alerts/) and the test emulator
// (exporter/sim/fleet) read their expressions, metric names, label names,
// layout rules and MIG geometry from here and from nowhere else, so that
// a lesson learned about an exporter's output is learned by all of them at
// once, and a report and a dashboard never show a team two utilisations.
// The forms those readers compose the signals with (aggregations,
// subqueries, joins, workload naming, kube-state-metrics' owners, rule
// shapes: forms.go and beside it) are written here too, and no Go file
// outside signals/ writes PromQL (TestNoPromQLOutsideSignals). A schema
// says what readers plan by in its Traits, never through its name, and
// signals/schemas is the one list of schemas.
//
// Nothing here links the Prometheus engine or TSDB: a rule or dashboard
// generator stays small.
package signals
