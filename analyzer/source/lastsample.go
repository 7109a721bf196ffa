package source

import (
	"context"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/tsdb/index"
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

// LastSample implements LastSampler from the head's bounds, which are
// exact, and the blocks': a block's meta.json MaxTime is only an upper
// bound (a block a compaction cut at its range's end says that end: the
// demo's week ending at 17:07 is one block to 18:00, and a report read at
// 17:30 would end there, 23 minutes past the data), so the newest block's
// last sample is read from its index's chunk bounds (every series' chunk
// metas, no sample), one block only. A chunk that runs past end counts as
// ending at end: later is the safe side, a window that ends after the
// data is told as data that stopped (fleet.Result.Stale), never read as an
// empty fleet.
func (e *Embedded) LastSample(ctx context.Context, end time.Time) (time.Time, bool, error) {
	blocks, spans := e.bounds()
	hi := end.UnixMilli()
	last := int64(math.MinInt64)
	for _, s := range spans {
		if s.min > hi {
			continue
		}
		last = max(last, min(s.max, hi))
	}
	// The newest block whose bounds could hold a later sample than the
	// head's, read exactly; older blocks end before it.
	var newest *tsdb.Block
	for _, b := range blocks {
		m := b.Meta()
		if m.MinTime > hi || m.MaxTime-1 <= last {
			continue
		}
		if newest == nil || m.MaxTime > newest.Meta().MaxTime {
			newest = b
		}
	}
	if newest != nil {
		t, ok, err := blockLastSample(ctx, newest, hi)
		if err != nil {
			return time.Time{}, false, err
		}
		if ok {
			last = max(last, t)
		}
		// A block whose chunks all start after end holds nothing at or
		// before it; an older one then may, and is taken at its bound.
		for _, b := range blocks {
			if m := b.Meta(); b != newest && m.MinTime <= hi {
				last = max(last, min(m.MaxTime-1, hi))
			}
		}
	}
	if last == math.MinInt64 {
		return time.Time{}, false, nil
	}
	return time.UnixMilli(last).UTC(), true, nil
}

// blockLastSample is the latest chunk end at or before hi (a chunk
// running past hi counts as hi) over every series of b.
func blockLastSample(ctx context.Context, b *tsdb.Block, hi int64) (int64, bool, error) {
	ir, err := b.Index()
	if err != nil {
		return 0, false, err
	}
	defer ir.Close()
	name, value := index.AllPostingsKey()
	p, err := ir.Postings(ctx, name, value)
	if err != nil {
		return 0, false, err
	}
	var builder labels.ScratchBuilder
	var chks []chunks.Meta
	last, ok := int64(math.MinInt64), false
	for p.Next() {
		if err := ir.Series(p.At(), &builder, &chks); err != nil {
			return 0, false, err
		}
		for _, c := range chks {
			if c.MinTime <= hi {
				last, ok = max(last, min(c.MaxTime, hi)), true
			}
		}
	}
	return last, ok, p.Err()
}

// span is a time range of samples, in milliseconds, both ends in it.
type span struct{ min, max int64 }

// bounds are the store's blocks and its head's spans, in-order and
// out-of-order, for FirstSample and LastSample.
func (e *Embedded) bounds() ([]*tsdb.Block, []span) {
	switch {
	case e.ro != nil:
		if e.ro.head == nil {
			return e.ro.blocks, nil
		}
		return e.ro.blocks, headSpans(e.ro.head.Head())
	case e.db != nil:
		return e.db.Blocks(), headSpans(e.db.Head())
	}
	return nil, nil
}

// headSpans are the head's bounds, in-order and out-of-order, where they
// hold samples. A head emptied by compaction (PersistHead's reopened one)
// says MinTime = MaxTime = the last block's end, a millisecond after its
// last sample: only a head with series counts. An empty in-order or
// out-of-order part says MinTime MaxInt64 and MaxTime MinInt64.
func headSpans(h *tsdb.Head) []span {
	if h.NumSeries() == 0 {
		return nil
	}
	var out []span
	for _, s := range []span{{h.MinTime(), h.MaxTime()}, {h.MinOOOTime(), h.MaxOOOTime()}} {
		if s.min <= s.max {
			out = append(out, s)
		}
	}
	return out
}
