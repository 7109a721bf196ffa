package collector

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gpulens/gpulens/exporter/gpu"
)

// benchNode builds an 8-GPU node snapshot: either 8×H200 in MIG mode with
// 7 instances each (56 slices, the dcgm-exporter anchor's shape), or
// 8×H100 time-sliced ×8 (64 processes).
func benchNode(mig bool) *gpu.Snapshot {
	s := &gpu.Snapshot{DriverVersion: "550.54.15", CUDAVersion: "12.4"}
	for i := range 8 {
		d := gpu.Device{Index: i, UUID: fmt.Sprintf("GPU-%08d-0000-0000-0000-000000000000", i), Model: "NVIDIA H100 80GB HBM3",
			PCIBusID: fmt.Sprintf("00000000:%02X:00.0", i), Up: true, Utilization: 0.5, MemoryUtilization: 0.2,
			SMActive: 0.4, SMOccupancy: 0.3, TensorActive: 0.2, DRAMActive: 0.1,
			MemoryUsedBytes: 40 << 30, MemoryTotalBytes: 80 << 30, MemoryReservedBytes: 512 << 20,
			PowerWatts: 400, EnergyJoules: 1e7, TemperatureC: 60, SMClockHz: 1.9e9, MemClockHz: 2.6e9,
			ThrottleValid: true, ECCCorrected: 0, ECCUncorrected: 0, RemappedRowsValid: true}
		if mig {
			d.Model, d.MIGMode, d.Utilization = "NVIDIA H200 141GB HBM3e", true, gpu.NA
			for j := range 7 {
				d.Instances = append(d.Instances, gpu.Instance{UUID: fmt.Sprintf("MIG-%08d-%04d-0000-0000-000000000000", i, j),
					GPUInstanceID: 7 + j, Profile: "1g.18gb", Slices: 1, MemorySlices: 1,
					MemoryUsedBytes: 10 << 30, MemoryTotalBytes: 18 << 30, SMActive: 0.5, SMOccupancy: 0.3, TensorActive: 0.2, DRAMActive: 0.1})
				d.Processes = append(d.Processes, gpu.Process{PID: uint32(1000 + i*10 + j), GPUInstanceID: 7 + j, MemoryUsedBytes: 10 << 30, SMUtilization: gpu.NA})
			}
		} else {
			for j := range 8 {
				d.Processes = append(d.Processes, gpu.Process{PID: uint32(1000 + i*10 + j), GPUInstanceID: -1, ComputeInstanceID: -1,
					MemoryUsedBytes: 5 << 30, SMUtilization: 0.06})
			}
		}
		s.Devices = append(s.Devices, d)
	}
	return s
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
	for _, node := range []struct {
		name string
		mig  bool
	}{{"8xH200-MIG-7", true}, {"8xH100-timesliced-8", false}} {
		s := New(Options{Backend: &fakeBackend{snap: benchNode(node.mig)}, Node: "node-a"})
		if err := s.SampleOnce(context.Background()); err != nil {
			b.Fatal(err)
		}
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
					c.h.ServeHTTP(w, req)
					b.ReportMetric(float64(w.n), "bytes/scrape")
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						w.h = http.Header{}
						c.h.ServeHTTP(w, req)
					}
				})
			}
		}
	}
}

// BenchmarkRebuild is the background cost of turning one snapshot into
// series (once per --collect.interval, never on a scrape).
func BenchmarkRebuild(b *testing.B) {
	s := New(Options{Backend: &fakeBackend{snap: benchNode(true)}, Node: "node-a"})
	b.ReportAllocs()
	for b.Loop() {
		if err := s.SampleOnce(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
