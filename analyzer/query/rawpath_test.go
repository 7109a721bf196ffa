package query

import (
	"context"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// engineOnly is a source without raw reads: the analysis asks its PromQL
// engine for every pass, as it does of a store without remote read.
type engineOnly struct {
	source.Source
	source.RangeQuerier
}

func (engineOnly) MaxRangeSteps() int { return 0 }

func promqlOnly(src source.Source) source.Source {
	return engineOnly{Source: src, RangeQuerier: src.(source.RangeQuerier)}
}

// rawPathCase is one store and window the two paths are held to each
// other on.
type rawPathCase struct {
	name string
	src  source.Source
	sch  signals.Schema
	w    fleet.Window
}

// checkRawPath analyses c twice, through the engine and from raw samples,
// and expects the same Result field by field, floats within 1e-9
// relative, with every pass of the second read from raw samples.
func checkRawPath(t *testing.T, c rawPathCase, shard Sharding) {
	t.Helper()
	engine, err := AnalyzeSharded(context.Background(), promqlOnly(c.src), c.sch, c.w, shard)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := AnalyzeSharded(context.Background(), c.src, c.sch, c.w, shard)
	if err != nil {
		t.Fatal(err)
	}
	if engine.RawPasses != 0 {
		t.Fatalf("the engine-only source had %d raw passes", engine.RawPasses)
	}
	if len(engine.Allocations) == 0 || len(engine.GPUs) == 0 {
		t.Fatalf("the engine found %d allocations and %d GPUs: the fixture proves nothing", len(engine.Allocations), len(engine.GPUs))
	}
	if raw.Passes == 0 || raw.RawPasses != raw.Passes {
		t.Errorf("%d of %d passes read from raw samples, want all (-v shows the fallbacks' reasons in debug logs)", raw.RawPasses, raw.Passes)
	}
	t.Logf("%d of %d queries answered from raw samples", raw.RawQueries, raw.QueryCount)
	raw.RawPasses, raw.RawQueries = 0, 0
	for _, d := range resultDiff("Result", reflect.ValueOf(*engine), reflect.ValueOf(*raw)) {
		t.Error(d)
	}
}

func TestRawPathMatchesEngine(t *testing.T) {
	methods := methodsFleet(t)

	scraped := func(file string) source.Source {
		f := newFleet(t)
		f.scrape(t, file, 1, 90)
		return f.commit(t)
	}
	cases := []rawPathCase{
		{"native fleet", buildFleet(t).src, native.Schema{}, window},
		{"methods and sharing change", methods.src, native.Schema{}, window},
		{"methods and sharing change, 7m steps", methods.src, native.Schema{}, fleet.Window{Start: t0.Add(3 * time.Minute), End: minute(237), Step: 7 * time.Minute}},
		{"native fixture", scraped("../../signals/testdata/native.prom"), native.Schema{}, fleet.Window{Start: t0, End: minute(120)}},
		{"dcgm-exporter fixture", scraped("../../signals/testdata/dcgm-exporter.prom"), dcgm.Schema{}, fleet.Window{Start: t0, End: minute(120)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkRawPath(t, c, Sharding{}) })
		// The same samples without stale markers, as a backfill, a
		// federation or a copy holds them: series end by the lookback.
		c.src = withoutStaleMarkers(t, c.src)
		t.Run(c.name+", no stale markers", func(t *testing.T) { checkRawPath(t, c, Sharding{}) })
	}
}

// withoutStaleMarkers copies src's samples into a new store, leaving out
// the stale markers.
func withoutStaleMarkers(t *testing.T, src source.Source) source.Source {
	t.Helper()
	q, ok := src.(source.RawReader).RawSamples()
	if !ok {
		t.Fatal("no raw samples")
	}
	qr, err := q.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer qr.Close()
	f := newFleet(t)
	set := qr.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+"))
	var it chunkenc.Iterator
	stale := 0
	for set.Next() {
		s := set.At()
		it = s.Iterator(it)
		for it.Next() == chunkenc.ValFloat {
			ts, v := it.At()
			if value.IsStaleNaN(v) {
				stale++
				continue
			}
			if _, err := f.app.Append(0, s.Labels(), ts, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := set.Err(); err != nil {
		t.Fatal(err)
	}
	if stale == 0 {
		t.Fatal("the store had no stale markers to leave out")
	}
	return f.commit(t)
}
