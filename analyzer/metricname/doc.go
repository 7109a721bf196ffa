// Package metricname writes series names with their labels, the one string
// github.com/VictoriaMetrics/metrics takes. It is a leaf: the Alertmanager
// client names its own series with it without linking the analysis.
package metricname
