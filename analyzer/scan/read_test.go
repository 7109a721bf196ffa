package scan

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
)

// TestRangeReadsChunks holds the scan's reads to the engine's over what a
// TSDB makes of ten hours of minutes: chunks of 120 samples, blocks cut
// by compaction and the head after them, a stale marker, gaps, and
// out-of-order samples written after the compaction into a gap of a
// block, whose chunks overlap the block's (read through the querier's
// merge). Both readers: the chunks, decoded here, and the samples.
func TestRangeReadsChunks(t *testing.T) {
	opts := tsdb.DefaultOptions()
	opts.OutOfOrderTimeWindow = (12 * time.Hour).Milliseconds()
	db, err := tsdb.Open(t.TempDir(), nil, nil, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	const end = 600 // minutes
	a := labels.FromStrings("__name__", "x", "s", "a")
	b := labels.FromStrings("__name__", "x", "s", "b")
	app := db.Appender(context.Background())
	for i := 0; i <= end; i++ {
		if i < 200 || i > 210 { // a gap, filled out of order below
			if _, err := app.Append(0, a, int64(i)*minute, float64(i%13)); err != nil {
				t.Fatal(err)
			}
		}
		v := float64(i%17) / 4
		switch {
		case i == 300:
			v = math.Float64frombits(value.StaleNaN)
		case i > 300 && i < 310:
			continue
		}
		if _, err := app.Append(0, b, int64(i)*minute, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(db.Blocks()) == 0 {
		t.Fatal("no block was cut: the test needs chunks in blocks and the head")
	}
	app = db.Appender(context.Background())
	for i := 200; i <= 210; i += 2 {
		if _, err := app.Append(0, a, int64(i)*minute, 100+float64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}

	ng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e8, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	for _, steps := range []struct{ start, end, step time.Duration }{
		{0, end * time.Minute, time.Minute},
		{90 * time.Second, end * time.Minute, 7 * time.Minute},
		{195 * time.Minute, 215 * time.Minute, time.Minute},
	} {
		for _, expr := range []string{`x`, `sum(x)`, `last_over_time(x[10m])`, `x offset 3m`} {
			diffRange(t, ng, db, expr, time.UnixMilli(steps.start.Milliseconds()), time.UnixMilli(steps.end.Milliseconds()), steps.step)
		}
	}
	// Range functions at one instant read the samples of their window.
	for _, at := range []int64{205 * minute, 400 * minute, end * minute} {
		for _, expr := range []string{`count_over_time(x[5h])`, `sum_over_time(x[10h])`, `max_over_time(x[7m])`, `min_over_time(x[1h] offset 2h)`} {
			diffInstant(t, ng, db, expr, time.UnixMilli(at))
		}
	}
}

// TestRangeOverlappingChunks: a ChunkQuerier may hand a series' chunks
// overlapping in time (the interface says so; the TSDB's merges them,
// a remote one need not). Such a series is read through Prometheus's own
// merge, as its sample querier reads it; one whose chunks follow each
// other is decoded chunk after chunk.
func TestRangeOverlappingChunks(t *testing.T) {
	run := func(from, to, every int, base float64) []chunks.Sample {
		var out []chunks.Sample
		for i := from; i <= to; i += every {
			out = append(out, fpoint{int64(i) * minute, base + float64(i)})
		}
		return out
	}
	q := chunkStore{
		storage.NewListChunkSeriesFromSamples(labels.FromStrings("__name__", "x", "s", "overlapping"), run(0, 60, 1, 0), run(30, 90, 2, 1000)),
		storage.NewListChunkSeriesFromSamples(labels.FromStrings("__name__", "x", "s", "sequential"), run(0, 40, 1, 0), run(47, 90, 1, 500)),
	}
	ng := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e8, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	for _, expr := range []string{`x`, `last_over_time(x[3m])`} {
		diffRange(t, ng, q, expr, time.UnixMilli(0), time.UnixMilli(100*minute), time.Minute)
	}
	for _, at := range []int64{45 * minute, 95 * minute} {
		for _, expr := range []string{`count_over_time(x[1h])`, `sum_over_time(x[30m])`, `max_over_time(x[2h])`} {
			diffInstant(t, ng, q, expr, time.UnixMilli(at))
		}
	}
}

// chunkStore serves its series as chunks, and as samples the way
// Prometheus turns chunks into samples (storage.NewSeriesSetFromChunkSeriesSet).
type chunkStore []storage.ChunkSeries

func (c chunkStore) ChunkQuerier(int64, int64) (storage.ChunkQuerier, error) { return c, nil }
func (c chunkStore) Querier(int64, int64) (storage.Querier, error)           { return sampleStore{c}, nil }

func (c chunkStore) Select(_ context.Context, _ bool, _ *storage.SelectHints, ms ...*labels.Matcher) storage.ChunkSeriesSet {
	var out chunkSet
	for _, s := range c {
		if matchAll(s.Labels(), ms) {
			out = append(out, s)
		}
	}
	return &chunkSetIter{series: out, i: -1}
}

func matchAll(ls labels.Labels, ms []*labels.Matcher) bool {
	for _, m := range ms {
		if !m.Matches(ls.Get(m.Name)) {
			return false
		}
	}
	return true
}

func (chunkStore) LabelValues(context.Context, string, *storage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, nil, nil
}

func (chunkStore) LabelNames(context.Context, *storage.LabelHints, ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	return nil, nil, nil
}
func (chunkStore) Close() error { return nil }

type sampleStore struct{ chunkStore }

func (s sampleStore) Select(ctx context.Context, sorted bool, h *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	return storage.NewSeriesSetFromChunkSeriesSet(s.chunkStore.Select(ctx, sorted, h, ms...))
}

type chunkSet []storage.ChunkSeries

type chunkSetIter struct {
	series chunkSet
	i      int
}

func (s *chunkSetIter) Next() bool                      { s.i++; return s.i < len(s.series) }
func (s *chunkSetIter) At() storage.ChunkSeries         { return s.series[s.i] }
func (*chunkSetIter) Err() error                        { return nil }
func (*chunkSetIter) Warnings() annotations.Annotations { return nil }

// fpoint is a float sample, for chunks.ChunkFromSamples.
type fpoint struct {
	t int64
	f float64
}

func (p fpoint) T() int64                    { return p.t }
func (fpoint) ST() int64                     { return 0 }
func (p fpoint) F() float64                  { return p.f }
func (fpoint) H() *histogram.Histogram       { return nil }
func (fpoint) FH() *histogram.FloatHistogram { return nil }
func (fpoint) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (p fpoint) Copy() chunks.Sample         { return p }
