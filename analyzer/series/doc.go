// Package series turns one analysis into Prometheus series with
// github.com/VictoriaMetrics/metrics: a finding per series, and each
// team's GPU-hours and cost. Build makes a fresh Set for every analysis,
// so a finding that went away has no series in the next one, instead of
// a stale value that lingers until a restart.
package series
