package collector

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// sample is one series of one collection, as a builder emits it.
type sample struct {
	desc *prometheus.Desc
	typ  prometheus.ValueType
	val  float64
	lv   []string
}

// seriesCache turns each collection's samples into series and their text
// exposition. At --collect.interval=1s the collection runs every second, and
// building const metrics and gathering them through a registry cost about
// fifty allocations a series (label pairs made and sorted, then checked and
// copied by the registry). Between two collections almost every series
// keeps its labels and only its value changes, so the label pairs, the
// exposition's per-series objects and the families are kept from one
// collection to the next, and only series that appear are built (through
// client_golang itself, so the bytes stay those a registry would write).
//
// It is used by one collection at a time (the Sampler's mutex).
type seriesCache struct {
	entries  map[seriesKey]*seriesEntry
	families map[*prometheus.Desc]*family
	gen      uint64
	hash     xxhash.Digest
	order    []*family // families of this collection, in first-seen order
	text     bytes.Buffer
	// zw compresses every collection's exposition. It is the cache's own
	// rather than gzipPool's: a sync.Pool drops what it holds at the second
	// garbage collection without use, and a fresh compressor allocates
	// 0.8 MB, which at one collection a second was most of the garbage and
	// so most of the collections' garbage-collection work.
	zw *gzip.Writer
}

type seriesKey struct {
	desc *prometheus.Desc
	hash uint64 // of the label values
}

type seriesEntry struct {
	lv     []string
	labels []*dto.LabelPair // as client_golang makes them: sorted, const labels included
	typ    prometheus.ValueType
	val    float64
	pb     dto.Metric // exposition object; its value points at val
	gen    uint64     // the last collection that emitted it
}

type family struct {
	mf  dto.MetricFamily
	gen uint64
}

func newSeriesCache() *seriesCache {
	return &seriesCache{entries: map[seriesKey]*seriesEntry{}, families: map[*prometheus.Desc]*family{}}
}

// constSeries is one series of a finished collection. Results are kept
// (and may be read) after the cache has moved on, so they hold their own
// value; the label pairs are immutable and shared.
type constSeries struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	typ    prometheus.ValueType
	val    float64
}

func (m *constSeries) Desc() *prometheus.Desc { return m.desc }

func (m *constSeries) Write(out *dto.Metric) error {
	out.Label = m.labels
	v := m.val
	if m.typ == prometheus.CounterValue {
		out.Counter = &dto.Counter{Value: &v}
	} else {
		out.Gauge = &dto.Gauge{Value: &v}
	}
	return nil
}

// build returns the collection's series and, unless skipExposition, their
// text and gzip exposition. An error means a builder bug: a series emitted
// twice, or labels that do not fit their Desc.
func (c *seriesCache) build(samples []sample, skipExposition bool) ([]prometheus.Metric, *encoded, error) {
	c.gen++
	slab := make([]constSeries, len(samples))
	ms := make([]prometheus.Metric, len(samples))
	c.order = c.order[:0]
	for i := range samples {
		sm := &samples[i]
		e, err := c.entry(sm)
		if err != nil {
			return nil, nil, err
		}
		if e.gen == c.gen {
			return nil, nil, fmt.Errorf("series %s{%s} emitted twice", descName(sm.desc), strings.Join(sm.lv, ","))
		}
		e.gen, e.val = c.gen, sm.val
		slab[i] = constSeries{desc: sm.desc, labels: e.labels, typ: sm.typ, val: sm.val}
		ms[i] = &slab[i]
		if skipExposition {
			continue
		}
		f, err := c.family(sm.desc, e)
		if err != nil {
			return nil, nil, err
		}
		f.mf.Metric = append(f.mf.Metric, &e.pb)
	}
	// Series and families that were not emitted this time are dropped.
	for k, e := range c.entries {
		if e.gen != c.gen {
			delete(c.entries, k)
		}
	}
	for d, f := range c.families {
		if f.gen != c.gen {
			delete(c.families, d)
		}
	}
	if skipExposition {
		return ms, nil, nil
	}
	enc, err := c.encode()
	return ms, enc, err
}

func (c *seriesCache) entry(sm *sample) (*seriesEntry, error) {
	c.hash.Reset()
	for _, v := range sm.lv {
		_, _ = c.hash.WriteString(v)
		_, _ = c.hash.Write([]byte{0xff})
	}
	key := seriesKey{sm.desc, c.hash.Sum64()}
	if e, ok := c.entries[key]; ok && e.typ == sm.typ && slices.Equal(e.lv, sm.lv) {
		return e, nil
	}
	// New (or, for a hash collision, rebuilt and not kept: the entry
	// already cached keeps its key).
	m, err := prometheus.NewConstMetric(sm.desc, sm.typ, 0, sm.lv...)
	if err != nil {
		return nil, err
	}
	e := &seriesEntry{lv: slices.Clone(sm.lv), typ: sm.typ}
	if err := m.Write(&e.pb); err != nil {
		return nil, err
	}
	e.labels = e.pb.Label
	if e.pb.Counter != nil {
		e.pb.Counter.Value = &e.val
	} else {
		e.pb.Gauge.Value = &e.val
	}
	if _, taken := c.entries[key]; !taken {
		c.entries[key] = e
	}
	return e, nil
}

// family returns d's family for this collection, made on d's first series
// by a registry (for its name, help and type exactly as Gather gives them).
func (c *seriesCache) family(d *prometheus.Desc, e *seriesEntry) (*family, error) {
	f, ok := c.families[d]
	if !ok {
		reg := prometheus.NewPedanticRegistry()
		m, err := prometheus.NewConstMetric(d, e.typ, 0, e.lv...)
		if err != nil {
			return nil, err
		}
		if err := reg.Register(staticMetrics{m}); err != nil {
			return nil, err
		}
		mfs, err := reg.Gather()
		if err != nil {
			return nil, err
		}
		f = &family{mf: dto.MetricFamily{Name: mfs[0].Name, Help: mfs[0].Help, Type: mfs[0].Type}}
		c.families[d] = f
	}
	if f.gen != c.gen {
		f.gen = c.gen
		f.mf.Metric = f.mf.Metric[:0]
		c.order = append(c.order, f)
	}
	if want := dtoType(e.typ); f.mf.GetType() != want {
		return nil, fmt.Errorf("family %s has series of types %s and %s", f.mf.GetName(), f.mf.GetType(), want)
	}
	return f, nil
}

func dtoType(t prometheus.ValueType) dto.MetricType {
	if t == prometheus.CounterValue {
		return dto.MetricType_COUNTER
	}
	return dto.MetricType_GAUGE
}

// encode writes the families in the order a registry's Gather gives them:
// by name, and within a family by label values.
func (c *seriesCache) encode() (*encoded, error) {
	slices.SortFunc(c.order, func(a, b *family) int { return strings.Compare(a.mf.GetName(), b.mf.GetName()) })
	c.text.Reset()
	enc := expfmt.NewEncoder(&c.text, textFormat)
	for _, f := range c.order {
		slices.SortFunc(f.mf.Metric, compareLabelValues)
		if err := enc.Encode(&f.mf); err != nil {
			return nil, err
		}
	}
	// Scrapes may still be writing the previous collection's bytes, so
	// these are new slices.
	text := bytes.Clone(c.text.Bytes())
	var gz bytes.Buffer
	gz.Grow(len(text) / 8)
	if c.zw == nil {
		c.zw, _ = gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	} else {
		c.zw.Reset(&gz)
	}
	_, _ = c.zw.Write(text)
	if err := c.zw.Close(); err != nil {
		return nil, err
	}
	return &encoded{text: text, gzip: gz.Bytes()}, nil
}

// compareLabelValues orders series as client_golang's registry does: the
// label pairs are sorted by name and a family's series share the names, so
// the values are compared in turn.
func compareLabelValues(a, b *dto.Metric) int {
	if n := len(a.Label) - len(b.Label); n != 0 {
		return n
	}
	for i := range a.Label {
		if c := strings.Compare(a.Label[i].GetValue(), b.Label[i].GetValue()); c != 0 {
			return c
		}
	}
	return 0
}
