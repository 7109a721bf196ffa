// Package scan evaluates a PromQL expression at every step of a window
// straight from a store's raw samples, a series at a time: each series'
// samples are read once from its chunks (storage.Querier over the embedded
// TSDB, or Prometheus remote read), its labels are worked once (matching,
// grouping, label_replace), and only the values are combined per step.
//
// The engine does the same work step by step: at 10,080 steps a week it
// re-gathers every input vector, rehashes every signature and rebuilds the
// output labels at each one, which is where the analysis's time went
// (docs/BENCHMARKS.md). The answers are the engine's, within float
// rounding of Kahan sums: the lookback and stale-marker rule of instant
// selectors, the matching and naming rules of binary operators and
// aggregations (promql/engine.go, v0.316.0).
//
// Only the subset of PromQL the analysis's passes use is implemented; any
// other node, or a case where the engine would fail (duplicate series at
// a step, many-to-many matching), is ErrUnsupported, and the caller falls
// back to the engine, which answers or fails in its own words.
package scan
