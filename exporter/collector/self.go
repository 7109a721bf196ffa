package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/signals/native"
)

// selfMetrics are the exporter's own health series. They are live
// collectors, not rebuilt per sample, because they must keep counting
// across failed samples.
type selfMetrics struct {
	duration    prometheus.Histogram
	collections *prometheus.CounterVec
	nvmlErrors  *prometheus.CounterVec
	lastSuccess prometheus.Gauge
}

func newSelfMetrics() *selfMetrics {
	return &selfMetrics{
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    native.ExporterCollectionDurationSeconds,
			Help:    "Time one background collection of every GPU took.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		collections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: native.ExporterCollectionsTotal,
			Help: "Background collections by result (success: at least the library answered; failure: nothing could be read).",
		}, []string{"result"}),
		nvmlErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: native.ExporterNVMLErrorsTotal,
			Help: "Failed NVML calls by function (NOT_SUPPORTED is not counted).",
		}, []string{"call"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: native.ExporterLastCollectionTimestampSeconds,
			Help: "Unix time of the last successful collection.",
		}),
	}
}

func (m *selfMetrics) observe(d time.Duration, snap *gpu.Snapshot, err error) {
	m.duration.Observe(d.Seconds())
	if err != nil {
		m.collections.WithLabelValues("failure").Inc()
		return
	}
	m.collections.WithLabelValues("success").Inc()
	if snap != nil {
		for call, n := range snap.Errors {
			m.nvmlErrors.WithLabelValues(call).Add(float64(n))
		}
	}
}

func (m *selfMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.duration.Describe(ch)
	m.collections.Describe(ch)
	m.nvmlErrors.Describe(ch)
	m.lastSuccess.Describe(ch)
}

func (m *selfMetrics) Collect(ch chan<- prometheus.Metric) {
	m.duration.Collect(ch)
	m.collections.Collect(ch)
	m.nvmlErrors.Collect(ch)
	m.lastSuccess.Collect(ch)
}
