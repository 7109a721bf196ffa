// Package fleet is the model of an analysed fleet: the window analysed
// (Window), the figures of each allocation, workload and GPU over it
// (Result, Allocation, Workload, GPU), the keys that name them, and the
// pure operations on them (a cluster's part of a result, the merge of
// several clusters' results and timelines).
//
// It is a leaf: the standard library and gpulens's own leaf packages
// (analyzer/workload, internal/promdur) only. analyzer/query reads the
// store into these types through the Prometheus engine or the raw-sample
// scan; findings, recommend, report, plan, quota and series read them, and
// must not link the engine, the TSDB or client-go for it (the deps tests
// in analyzer/ hold them to that).
package fleet
