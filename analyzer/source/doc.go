// Package source runs PromQL for the analyzer.
//
// A Source is where the analysis queries are evaluated: either any
// Prometheus-compatible HTTP API (Prometheus, VictoriaMetrics, Thanos, Mimir)
// through client_golang's api package, or the real tsdb and promql packages of
// github.com/prometheus/prometheus running in-process over a local data
// directory. Both speak the same PromQL, so every query the analyzer issues is
// tested against the real engine.
package source
