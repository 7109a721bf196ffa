// Package vocab holds the names gpulens's parts must agree on: the alert
// list that the rule files (alerts/) and gpulens serve (analyzer/serve)
// both send, the finding kinds those alerts are raised for, the series
// serve exposes, the default cluster label, the NVIDIA and HAMi resource
// and node label names, the sharing modes and allocation paths, the schema
// names, the rule of a pod's workload by its name, and the hours in a
// billing month.
//
// It is a leaf (standard library only), so that the exporter, the rule
// and dashboard generators and the analysis can all import it without
// linking one another, and the reasoning packages (findings, ledger,
// report, plan, recommend, inventory) name a fleet's facts without
// linking signals/, the PromQL.
package vocab
