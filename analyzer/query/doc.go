// Package query is the analysis query set: a fixed number of PromQL instant
// queries, evaluated at the end of a window, that turn a fleet's GPU series
// into per-allocation and per-GPU figures.
//
// All aggregation happens inside the engine: every query is a
// *_over_time(expr[RANGE:STEP]) subquery over the whole window, so the
// number of queries and the data returned per query do not depend on how
// many samples were stored, and the number of queries does not grow with
// pods or GPUs (Result.QueryCount).
//
// Time is measured in subquery steps. A signal "is seen" at a step when the
// engine returns a value for it there (the latest sample within the 5m
// lookback, unless Prometheus marked the series stale when it disappeared).
// Definitions:
//   - held hours: steps at which an allocation was seen × step.
//   - allocated GPU-hours: the sum over those steps of the allocation's
//     share of the physical GPU × step; a pod holding 3g.40gb of an A100 for
//     7h has 7 held hours and 3 allocated GPU-hours.
//   - coverage: steps seen / steps in the window, 0..1. Gaps (an exporter
//     restart, a pod that started mid-window) lower coverage and are never
//     filled in: averages are over the steps that have data, and the
//     coverage says how many that was.
//   - co-tenants: the peak number of allocations on a GPU at one step.
package query
