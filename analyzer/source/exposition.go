package source

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
	"github.com/prometheus/prometheus/storage"
)

// AppendExposition parses one /metrics response in the Prometheus text or
// OpenMetrics format (contentType as the exporter sent it; empty means the
// Prometheus text format) and appends its float samples at ts, or at a
// sample's own timestamp when it has one. It returns the series appended so
// a caller can write staleness markers for those that later disappear, as
// Prometheus's scrape loop does. Histograms are skipped: no analysis signal
// uses them. The caller commits app.
func AppendExposition(app storage.Appender, data []byte, contentType string, ts time.Time) ([]labels.Labels, error) {
	if contentType == "" {
		contentType = "text/plain; version=0.0.4"
	}
	p, err := textparse.New(data, contentType, labels.NewSymbolTable(), textparse.ParserOptions{})
	if p == nil {
		return nil, fmt.Errorf("unsupported exposition format %q: %w", contentType, err)
	}
	var series []labels.Labels
	for {
		entry, err := p.Next()
		if errors.Is(err, io.EOF) {
			return series, nil
		}
		if err != nil {
			return series, fmt.Errorf("parsing exposition: %w", err)
		}
		if entry != textparse.EntrySeries {
			continue
		}
		_, sampleTS, v := p.Series()
		t := ts.UnixMilli()
		if sampleTS != nil {
			t = *sampleTS
		}
		var lset labels.Labels
		p.Labels(&lset)
		if _, err := app.Append(0, lset, t, v); err != nil {
			return series, fmt.Errorf("appending %s: %w", lset, err)
		}
		series = append(series, lset)
	}
}
