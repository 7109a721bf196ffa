package collector

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// State is what a builder turns into series: one sample of the node.
type State struct {
	Node     string
	Snapshot *gpu.Snapshot
	// Attribution is nil when the exporter does not attribute to pods.
	Attribution *AttributionState
}

// builder produces one family of series from a State. Builders run in the
// sampler goroutine, never during a scrape.
type builder interface {
	describe(ch chan<- *prometheus.Desc)
	build(st *State, emit func(sample))
}

// gauge and counter keep the builders terse; the series cache checks the
// label values against the Desc when a series first appears.
func gauge(d *prometheus.Desc, v float64, lv ...string) sample {
	return sample{desc: d, typ: prometheus.GaugeValue, val: v, lv: lv}
}

func counter(d *prometheus.Desc, v float64, lv ...string) sample {
	return sample{desc: d, typ: prometheus.CounterValue, val: v, lv: lv}
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
