package collector

import (
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// The device series change once per sample, but are scraped by every
// Prometheus replica on every scrape interval. Encoding them is the only
// real work a scrape has, so it is done once per sample, in the sampler
// goroutine, in both plain and gzip form (kube-state-metrics caches its
// rendered series the same way). A scrape then writes those bytes and
// encodes only the few live self-metrics after them. Text exposition lets
// families follow each other freely, and gzip readers accept concatenated
// members (RFC 1952 §2.2), so both parts can be written one after the other.

var textFormat = expfmt.NewFormat(expfmt.TypeTextPlain)

// encoded is the text exposition of one sample's series.
type encoded struct {
	text []byte
	gzip []byte
}

// staticMetrics is a collector over an already built list.
type staticMetrics []prometheus.Metric

func (c staticMetrics) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }
func (c staticMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}

// Handler serves the latest sample's pre-encoded series followed by the
// live families of extra (self-metrics, build info, Go runtime). extra must
// not contain the Sampler itself, or its series would appear twice.
func (s *Sampler) Handler(extra prometheus.Gatherer, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		live, err := extra.Gather()
		if err != nil {
			// Like promhttp's ContinueOnError: serve what could be gathered.
			logger.Error("gathering self-metrics", "err", err)
		}
		var cached *encoded
		if res := s.latest.Load(); res != nil {
			cached = res.encoded
		}
		w.Header().Set("Content-Type", string(textFormat))
		var out io.Writer = w
		var zw *gzip.Writer
		if acceptsGzip(r) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Add("Vary", "Accept-Encoding")
			if cached != nil {
				w.Write(cached.gzip)
			}
			zw = gzipPool.Get().(*gzip.Writer)
			zw.Reset(w)
			defer gzipPool.Put(zw)
			out = zw
		} else if cached != nil {
			w.Write(cached.text)
		}
		enc := expfmt.NewEncoder(out, textFormat)
		for _, mf := range live {
			if err := enc.Encode(mf); err != nil {
				logger.Debug("writing scrape response", "err", err)
				return
			}
		}
		if zw != nil {
			zw.Close()
		}
	})
}

// gzipPool reuses compressors: a fresh gzip.Writer allocates over 1 MiB,
// more than the rest of a scrape together.
var gzipPool = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return zw
}}

func acceptsGzip(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept-Encoding"), ",") {
		if enc, _, _ := strings.Cut(strings.TrimSpace(part), ";"); enc == "gzip" {
			return true
		}
	}
	return false
}

// SelfCollector returns the exporter's own live metrics, to register next
// to build info and runtime collectors for Handler.
func (s *Sampler) SelfCollector() prometheus.Collector { return s.self }
