package collector

import (
	"bytes"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// registryText is the exposition a pedantic registry writes for samples:
// what the cache must reproduce byte for byte.
func registryText(t *testing.T, samples []sample) string {
	t.Helper()
	var ms staticMetrics
	for _, s := range samples {
		ms = append(ms, prometheus.MustNewConstMetric(s.desc, s.typ, s.val, s.lv...))
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(ms)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, textFormat)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestSeriesCacheMatchesRegistry: across collections in which values
// change, series come and go and a family empties, the cached exposition
// equals a registry's, and the series of an earlier result keep their
// values.
func TestSeriesCacheMatchesRegistry(t *testing.T) {
	used := prometheus.NewDesc("x_used_bytes", "Used.", []string{"gpu", "pod"}, prometheus.Labels{"node": "n1"})
	errs := prometheus.NewDesc("x_errors_total", "Errors.", []string{"gpu"}, nil)
	info := prometheus.NewDesc("x_info", "Info.", []string{"gpu"}, nil)
	collections := [][]sample{
		{gauge(used, 1, "1", "b"), gauge(used, 2, "0", "a"), counter(errs, 3, "0"), gauge(info, 1, "0")},
		{gauge(used, 5, "0", "a"), gauge(used, 6, "2", "c"), counter(errs, 4, "0"), gauge(info, 1, "0")},
		{gauge(used, 7, "2", "c"), gauge(info, 1, "0")},
		{gauge(used, 8, "1", "b"), counter(errs, 9, "0"), counter(errs, 10, "1")},
	}
	c := newSeriesCache()
	var first []prometheus.Metric
	for i, samples := range collections {
		ms, enc, err := c.build(samples, false)
		if err != nil {
			t.Fatalf("collection %d: %v", i, err)
		}
		if want := registryText(t, samples); string(enc.text) != want {
			t.Errorf("collection %d:\n got %s\nwant %s", i, enc.text, want)
		}
		if i == 0 {
			first = ms
		}
	}
	if got := registryText(t, collections[0]); got != textOf(t, first) {
		t.Errorf("the first result's series changed:\n got %s\nwant %s", textOf(t, first), got)
	}
}

func textOf(t *testing.T, ms []prometheus.Metric) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(staticMetrics(ms))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, textFormat)
	for _, mf := range mfs {
		_ = enc.Encode(mf)
	}
	return b.String()
}

func TestSeriesCacheRefusesBuilderBugs(t *testing.T) {
	d := prometheus.NewDesc("x", "X.", []string{"gpu"}, nil)
	for name, samples := range map[string][]sample{
		"duplicate":   {gauge(d, 1, "0"), gauge(d, 2, "0")},
		"label count": {gauge(d, 1, "0", "extra")},
		"mixed types": {gauge(d, 1, "0"), counter(d, 1, "1")},
	} {
		if _, _, err := newSeriesCache().build(samples, false); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
