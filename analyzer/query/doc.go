// Package query is the analysis query set: a fixed number of PromQL
// queries over a window that turn a fleet's GPU series into per-allocation
// and per-GPU figures, those of the fleet model (analyzer/fleet, which
// links none of the engine this package drives). The number of queries
// does not grow with pods or GPUs (fleet.Result.QueryCount).
//
// Passes (passQueries; the source must answer range queries): each signal
// with several figures is read once, as a range query at exactly the steps
// a subquery over the window evaluates (firstStep), and its figures
// (count, sum, average, maximum, last, quantiles, deriv) and its per-step
// groupings (by allocation, GPU, workload) are computed in Go with the
// engine's own arithmetic (stats.go). The other figures, one per signal,
// are instant *_over_time(expr[RANGE:STEP]) subqueries. Scans
// (scanQueries, in scanqueries_test.go: no production source lacks range
// queries): a subquery per figure, every aggregation in the engine, so a
// signal is evaluated once per figure; TestPassesMatchScans holds the
// passes to them as an independent oracle. The cost notes below are
// of the subqueries, which is what a pass costs too, once per signal.
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
//   - workload: the allocations of one controller's pods (inferred in the
//     engine from pod names, withWorkload) of one shape (container, model,
//     MIG profile). Its steps are the union of its allocations' (steps
//     with at least one held), its p95 utilization and p99 memory are over
//     the busiest allocation at each step, and its sums and pooled average
//     are composed from the allocations' own figures.
//   - memory in use on a GPU: the device's own used memory per step, and
//     the tenants present at each step summed per step; both are taken at
//     their p99 over steps, never summed across tenants' own peaks.
//
// Cost. On the embedded engine a subquery costs (series × steps): the
// engine evaluates the inner expression at each of the window's steps
// (10,080 for a week of minutes), holding a series × steps matrix per
// aggregation level, and PromQL shares nothing between queries, nor
// between two uses of one expression in a query, so every figure pays for
// its own inner evaluation. A week of 1,000 GPUs is therefore about 10M
// points per subquery level, and the query set is shaped so that no
// figure pays more than it must. Each shape below gives exactly the
// answer of the plain form (same series, same float64 values;
// TestShapesMatchPlainForms compares them), and none depends on the
// fleet's size:
//   - A max over a max is one max (maxBy): the schemas' signals are
//     already "max by (labels) (...)" and the query set re-aggregates them
//     by a key that is a subset of those labels; one aggregation pass per
//     step instead of two. This was about a third of a utilization or
//     memory query.
//   - Peaks aggregate over time first (maxOverTime):
//     "max by (key) (max_over_time((x)[w:s]))" instead of
//     "max_over_time((max by (key) (x))[w:s])": a maximum over steps and
//     series does not depend on the order, and this one needs no
//     aggregation at each step.
//   - The right-hand side of "and on (key)" is read without its
//     aggregation (presence): "and" only asks whether a match exists.
//   - Queries run two at a time (runQueries): each is single-threaded in
//     the engine, so this uses two cores; answers are applied in the
//     query set's order, so the result does not depend on timing. It is
//     not free: 5-20% more CPU time (two heaps' worth of garbage) and,
//     at 1,000 GPUs, a peak of about 1.8 GiB instead of 1.1, since each
//     query in flight holds its matrices. More than two would add memory
//     without cores to run on.
//
// Rejected, because they change results: a coarser subquery step;
// range functions over raw samples instead of subqueries (they differ from
// the steps' view by the lookback before the window's start, samples
// closer than a step, and series that ended before the window did);
// splitting the window into pieces (sums and averages round differently);
// packing two figures into one value. There is no cheaper exact form of
// quantile_over_time in PromQL; it sorts each series' steps, about half
// again the cost of an average. Tuning the Go garbage collector (worth
// about 15%) is a process-wide choice for the program, not for a library.
// The embedded engine's options need no change: per-step statistics are
// off by default, MaxSamples is a bound that costs nothing, and a week of
// data is read from compacted blocks, where the head's chunk settings play
// no part.
//
// Memory: the engine's MaxSamples (50M by default for the embedded
// source, as Prometheus's --query.max-samples) bounds one query's points.
// The largest query ("gpu allocated steps": two selectors and their
// intersection) holds just over 3 points per GPU and step, so at a week
// of one-minute steps one query over more than roughly 1,600 GPUs is
// refused. AnalyzeSharded (shard.go) therefore splits a fleet over its
// sample budget into ranges of nodes, and the workload and owner queries
// into ranges of tenant namespaces, so each query stays within it; see
// docs/ARCHITECTURE.md ("Past one query's sample limit") and
// docs/BENCHMARKS.md for measured figures.
package query
