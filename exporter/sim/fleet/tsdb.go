package fleet

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/storage"
)

// Appendable is where TSDBSink writes: the embedded TSDB.
type Appendable interface {
	Appender(ctx context.Context) storage.Appender
}

// TSDBSink appends one node's series to a TSDB the way a Prometheus scrape
// would, including staleness markers for series that disappear (a pod that
// ends), so that queries see them end at once rather than five minutes
// later. Each node gets its own sink: TSDB appenders are independent, so
// nodes ingest in parallel.
type TSDBSink struct {
	db  Appendable
	ctx context.Context
	// CommitEvery bounds how many steps share one appender; default 60.
	CommitEvery int

	app    storage.Appender
	steps  int
	series map[uint64]*seriesRef
	gen    uint32
	buf    labels.ScratchBuilder
	// samples counts appended samples, stale markers excluded; shared by
	// the sinks of one run.
	samples *atomic.Int64
	// target are the labels a Prometheus scrape adds (job, instance).
	target []labels.Label
	// noStaleness leaves the staleness markers out (WithoutStaleness).
	noStaleness bool
}

// WithoutStaleness writes no staleness markers, as data reaches a store
// that was not its live scrape: a backfill (promtool tsdb
// create-blocks-from), federation, a remote-write copy of some stores. A
// series that ended then stays visible for the lookback (five minutes).
func (s *TSDBSink) WithoutStaleness() *TSDBSink {
	s.noStaleness = true
	return s
}

// WithTarget adds the job and instance labels a Prometheus scrape of the
// node's exporter would add. Without them, series that carry no node
// label (the exporter's self-metrics) of different nodes would collide.
func (s *TSDBSink) WithTarget(job, instance string) *TSDBSink {
	s.target = []labels.Label{{Name: "job", Value: job}, {Name: "instance", Value: instance}}
	return s
}

type seriesRef struct {
	ref  storage.SeriesRef
	lset labels.Labels
	seen uint32
}

// NewTSDBSink writes to db and adds the samples it writes to samples.
func NewTSDBSink(ctx context.Context, db Appendable, samples *atomic.Int64) *TSDBSink {
	return &TSDBSink{db: db, ctx: ctx, CommitEvery: 60, series: map[uint64]*seriesRef{}, gen: 1, samples: samples}
}

func seriesHash(name string, lbls []*dto.LabelPair) uint64 {
	d := xxhash.New()
	d.WriteString(name)
	for _, l := range lbls {
		d.Write([]byte{0xff})
		d.WriteString(l.GetName())
		d.Write([]byte{0xfe})
		d.WriteString(l.GetValue())
	}
	return d.Sum64()
}

// Append implements Sink.
func (s *TSDBSink) Append(ts time.Time, name string, lbls []*dto.LabelPair, v float64) error {
	if s.app == nil {
		s.app = s.db.Appender(s.ctx)
	}
	h := seriesHash(name, lbls)
	sr := s.series[h]
	if sr == nil {
		s.buf.Reset()
		s.buf.Add(labels.MetricName, name)
		for _, l := range lbls {
			s.buf.Add(l.GetName(), l.GetValue())
		}
		for _, l := range s.target {
			s.buf.Add(l.Name, l.Value)
		}
		s.buf.Sort()
		sr = &seriesRef{lset: s.buf.Labels()}
		s.series[h] = sr
	}
	sr.seen = s.gen
	ref, err := s.app.Append(sr.ref, sr.lset, ts.UnixMilli(), v)
	if err != nil {
		return fmt.Errorf("appending %s at %s: %w", sr.lset, ts.Format(time.RFC3339), err)
	}
	sr.ref = ref
	s.samples.Add(1)
	return nil
}

// EndStep implements Sink: series not seen in this step get a staleness
// marker and are forgotten; every CommitEvery steps the appender commits.
func (s *TSDBSink) EndStep(ts time.Time) error {
	if s.app == nil {
		s.app = s.db.Appender(s.ctx)
	}
	stale := math.Float64frombits(value.StaleNaN)
	for h, sr := range s.series {
		if sr.seen != s.gen {
			if s.noStaleness {
				delete(s.series, h)
				continue
			}
			if _, err := s.app.Append(sr.ref, sr.lset, ts.UnixMilli(), stale); err != nil {
				return fmt.Errorf("marking %s stale: %w", sr.lset, err)
			}
			delete(s.series, h)
		}
	}
	s.gen++
	s.steps++
	if s.steps%s.CommitEvery == 0 {
		return s.Commit()
	}
	return nil
}

// Close implements Sink: it commits what is left.
func (s *TSDBSink) Close() error { return s.Commit() }

// Commit flushes the current appender.
func (s *TSDBSink) Commit() error {
	if s.app == nil {
		return nil
	}
	err := s.app.Commit()
	s.app = nil
	return err
}
