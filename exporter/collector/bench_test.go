package collector

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpulens/gpulens/exporter/nvml"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/simkube"
)

// benchSampler is a Sampler over one of the benchmark nodes in
// testdata/scenarios, through the real path: the NVML reader over the
// simulator's go-nvml mock server, and pod attribution through the
// simulated kubelet and /proc. It has sampled twice, so GPM ratios exist.
func benchSampler(b *testing.B, scenario string) *Sampler {
	b.Helper()
	sc, err := sim.Load("../../testdata/scenarios/" + scenario)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 1, 5, 14, 0, 0, 0, time.UTC)
	be, err := sim.NewBackend(sc, sim.BackendOptions{Start: now, Clock: func() time.Time { return now },
		NVML: nvml.Options{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	kube, err := simkube.NewNode(be.Node(), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s := New(Options{Backend: be, Node: "node-a", Attribution: &Attribution{
		Allocations: kube.Allocations, Pods: kube.Pods(), ProcRoot: kube.ProcRoot(), SharedMode: kube.SharedMode()}})
	for range 2 {
		now = now.Add(time.Minute)
		if err := s.SampleOnce(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

var benchNodes = []struct{ name, scenario string }{
	{"8xH200-MIG-7", "h200-mig56.yaml"},
	{"8xH100-timesliced-8", "h100-timeslice64.yaml"},
}

// discardWriter is an http.ResponseWriter that counts and drops the body.
type discardWriter struct {
	h http.Header
	n int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(int)             {}
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkScrape compares a scrape of the exporter's handler (pre-encoded
// device series plus live self-metrics) with promhttp encoding the same
// series from static const metrics, the usual exporter floor.
// scripts/bench-scrape.sh turns one run into the ratio in BENCHMARKS.md.
func BenchmarkScrape(b *testing.B) {
	for _, node := range benchNodes {
		s := benchSampler(b, node.scenario)
		live := prometheus.NewRegistry()
		live.MustRegister(s.SelfCollector())
		exporter := s.Handler(live, slog.New(slog.DiscardHandler))

		staticReg := prometheus.NewRegistry()
		staticReg.MustRegister(staticMetrics(s.latest.Load().metrics), s.SelfCollector())
		static := promhttp.HandlerFor(staticReg, promhttp.HandlerOpts{})

		for _, c := range []struct {
			name string
			h    http.Handler
		}{{"exporter", exporter}, {"static", static}} {
			for _, gz := range []bool{false, true} {
				name := node.name + "/" + c.name
				req := httptest.NewRequest("GET", "/metrics", nil)
				if gz {
					name += "-gzip"
					req.Header.Set("Accept-Encoding", "gzip")
				}
				b.Run(name, func(b *testing.B) {
					w := &discardWriter{h: http.Header{}}
					b.ReportAllocs()
					for b.Loop() {
						w.h, w.n = http.Header{}, 0
						c.h.ServeHTTP(w, req)
					}
					// After the loop: ResetTimer would discard it.
					b.ReportMetric(float64(w.n), "bytes/scrape")
				})
			}
		}
	}
}

// BenchmarkCollect is one whole background collection of a node (NVML
// reads, pod attribution, series rebuild and encoding): the work that runs
// once per --collect.interval and never on a scrape. The simulator's own
// cost is included, so this is an upper bound of the exporter's share.
func BenchmarkCollect(b *testing.B) {
	for _, node := range benchNodes {
		b.Run(node.name, func(b *testing.B) {
			s := benchSampler(b, node.scenario)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := s.SampleOnce(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(s.latest.Load().metrics)), "series")
		})
	}
}
