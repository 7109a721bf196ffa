// Package session holds one analyzer session: what every use case of the
// analyzer needs, opened once (the metrics source, the schema, the cluster
// inventory, the thresholds, the prices and the window), and the use cases
// themselves: the analysis, the plan, and the report, which is the analysis
// with the plan's consolidation section.
//
// The commands parse flags into a Config, open a Session, call one use case
// and map its errors to exit codes; gpulens serve opens one per cycle. So a
// report, a demo and a server cycle over the same window produce the same
// report, and a --data-dir TSDB is opened and its head replayed once per
// command, not once per use case.
package session
