// Package signals holds what every reader of the exporters' data shares:
// the PromQL building blocks and the MIG geometry as PromQL matchers. Each
// exporter's own description is a subpackage: signals/native for
// gpulens-exporter's series and signals/dcgm for NVIDIA dcgm-exporter's.
//
// The analyzer's schemas (analyzer/schema), the dashboards (dashboards/),
// the recording and alerting rules (alerts/) and the test emulator
// (internal/fleet) take metric names, label names, layout rules and MIG
// geometry from there and from nowhere else, so that a lesson learned
// about an exporter's output is learned by all of them at once.
package signals
