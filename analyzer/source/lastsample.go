package source

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/prometheus/tsdb"
)

// LastSampler is a source that can tell cheaply, without reading samples,
// when its last sample is: a store on disk, which stops where it was
// copied or simulated, unlike a server that is written to as it is read.
// A report of it without --until ends there, not at the reader's now,
// whose minutes after the store's end would read as data that stopped.
type LastSampler interface {
	// LastSample is the time of the store's last sample at or before
	// end, or a time after it (never after end); ok is false when the
	// store holds no sample at or before end.
	LastSample(ctx context.Context, end time.Time) (last time.Time, ok bool, err error)
}

var _ LastSampler = (*Embedded)(nil)

// LastSample implements LastSampler from the blocks' meta.json and the
// head's bounds, as FirstSample does. A block's MaxTime is exclusive: a
// block written from the head (the demo's PersistHead, a backfill) ends
// 1ms after its last sample (prometheus tsdb/head.go,
// RangeHead.BlockMaxTime, MaxTime()+1); one a running Prometheus cut at its
// range's end says that end, which is later than its last sample when no
// sample came after (the head, where a copy's newest samples lie, says
// its own exactly). Later is the safe side: a window that ends after the
// data is told as data that stopped (fleet.Result.Stale), never read as
// an empty fleet.
func (e *Embedded) LastSample(_ context.Context, end time.Time) (time.Time, bool, error) {
	var spans []span
	switch {
	case e.ro != nil:
		for _, b := range e.ro.blocks {
			spans = append(spans, span{b.Meta().MinTime, b.Meta().MaxTime - 1})
		}
		if e.ro.head != nil {
			spans = append(spans, headSpans(e.ro.head.Head())...)
		}
	case e.db != nil:
		for _, b := range e.db.Blocks() {
			spans = append(spans, span{b.Meta().MinTime, b.Meta().MaxTime - 1})
		}
		spans = append(spans, headSpans(e.db.Head())...)
	}
	hi := end.UnixMilli()
	last := int64(math.MinInt64)
	for _, s := range spans {
		// An empty head says MinTime MaxInt64 and MaxTime MinInt64.
		if s.min > s.max || s.min > hi {
			continue
		}
		last = max(last, min(s.max, hi))
	}
	if last == math.MinInt64 {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(last).UTC(), true, nil
}

type span struct{ min, max int64 }

// headSpans are the head's bounds, in-order and out-of-order. A head
// emptied by compaction (PersistHead's reopened one) says MinTime =
// MaxTime = the last block's end, a millisecond after its last sample:
// only a head with series counts.
func headSpans(h *tsdb.Head) []span {
	if h.NumSeries() == 0 {
		return nil
	}
	return []span{{h.MinTime(), h.MaxTime()}, {h.MinOOOTime(), h.MaxOOOTime()}}
}
