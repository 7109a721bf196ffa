package scan

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
)

// reader reads selectors' raw samples onto the grid, each selector once
// per evaluation.
type reader struct {
	ctx      context.Context
	q        storage.Queryable
	lookback int64
	// leftClosed keeps a sample at a window's very start (Prometheus 2).
	leftClosed bool
	cache      map[string][]*series
	// held counts the step values allocated, which stay in memory until
	// the expression is answered; maxHeld bounds them (0: no bound).
	held, maxHeld int64
	// buffers are the values allocated, released when the answer is out.
	buffers [][]float64
}

// instant is vs evaluated at every step: the latest sample at or before
// the step (less the offset), if it is within the lookback and is not a
// stale marker. The window is left-open, as Prometheus 3's.
func (r *reader) instant(vs *parser.VectorSelector, g Grid) ([]*series, error) {
	return r.read(vs, g, r.lookback, false)
}

// lastOverTime is last_over_time(vs[rng]) at every step: the latest sample
// that is not a stale marker in (step - offset - rng, step - offset].
func (r *reader) lastOverTime(vs *parser.VectorSelector, g Grid, rng time.Duration) ([]*series, error) {
	return r.read(vs, g, rng.Milliseconds(), true)
}

func (r *reader) read(vs *parser.VectorSelector, g Grid, window int64, skipStale bool) ([]*series, error) {
	if vs.Timestamp != nil || vs.StartOrEnd != 0 || vs.Anchored || vs.Smoothed || vs.BypassEmptyMatcherCheck {
		return nil, unsupported("selector modifiers in %s", vs)
	}
	key := fmt.Sprintf("%d/%d/%d %s", g.Start, g.Step, g.N, vs)
	if skipStale {
		key = "last_over_time " + key + " " + time.Duration(window*int64(time.Millisecond)).String()
	}
	if s, ok := r.cache[key]; ok {
		return s, nil
	}
	off := vs.OriginalOffset.Milliseconds()
	mint, maxt := g.Start-off-window, g.End()-off
	hints := &storage.SelectHints{Start: mint, End: maxt, Step: g.Step}
	var out []*series
	err := r.eachSeries(vs.LabelMatchers, hints, func(lset labels.Labels, it chunkenc.Iterator, more []chunks.Meta) error {
		v, err := r.fill(it, more, g, off, window, skipStale)
		if v != nil {
			out = append(out, &series{lset: lset, v: v})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if r.cache == nil {
		r.cache = map[string][]*series{}
	}
	r.cache[key] = out
	return out, nil
}

// eachSeries hands fn each series the selection matches, its samples in
// time order: those of the iterator, then those of each chunk of more in
// turn; the iterator is reused from series to series. Where the store
// serves chunks (storage.ChunkQueryable), they are decoded here: the
// sample querier's iterator merges a series' blocks and applies deletions
// sample by sample, through three interfaces a sample, which cost as much
// as the decoding. A series whose chunks overlap (the interface allows
// it; the TSDB merges them first) is read through Prometheus's own merge.
func (r *reader) eachSeries(ms []*labels.Matcher, hints *storage.SelectHints, fn func(labels.Labels, chunkenc.Iterator, []chunks.Meta) error) error {
	cq, ok := r.q.(storage.ChunkQueryable)
	if !ok {
		q, err := r.q.Querier(hints.Start, hints.End)
		if err != nil {
			return err
		}
		defer q.Close()
		set := q.Select(r.ctx, false, hints, ms...)
		var it chunkenc.Iterator
		for set.Next() {
			if err := r.ctx.Err(); err != nil {
				return err
			}
			s := set.At()
			it = s.Iterator(it)
			if err := fn(s.Labels(), it, nil); err != nil {
				return err
			}
		}
		return set.Err()
	}
	q, err := cq.ChunkQuerier(hints.Start, hints.End)
	if err != nil {
		return err
	}
	defer q.Close()
	// Whole chunks: the readers skip the samples outside their windows
	// themselves, and trimming them would re-encode the first and last
	// chunk of every series.
	h := *hints
	h.DisableTrimming = true
	set := q.Select(r.ctx, false, &h, ms...)
	var (
		cit   chunks.Iterator
		it    chunkenc.Iterator
		metas []chunks.Meta
	)
	for set.Next() {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		s := set.At()
		cit = s.Iterator(cit)
		metas = metas[:0]
		overlap := false
		for cit.Next() {
			m := cit.At()
			if len(metas) > 0 && m.MinTime <= metas[len(metas)-1].MaxTime {
				overlap = true
			}
			metas = append(metas, m)
		}
		if err := cit.Err(); err != nil {
			return err
		}
		switch {
		case len(metas) == 0:
			continue
		case overlap:
			iterables := make([]chunkenc.Iterable, len(metas))
			for i, m := range metas {
				iterables[i] = m.Chunk
			}
			err = fn(s.Labels(), storage.ChainSampleIteratorFromIterables(nil, iterables), nil)
		default:
			it = metas[0].Chunk.Iterator(it)
			err = fn(s.Labels(), it, metas[1:])
		}
		if err != nil {
			return err
		}
	}
	return set.Err()
}

// fill walks one series' samples once, in time order, and gives each step
// the sample that was latest at it, if that is within the window and not a
// stale marker. It returns nil when no step has a value. The samples are
// those of it, then those of each chunk of more in turn (chunks in time order
// that do not overlap). At a week of minutes this is the loop every
// sample of the analysis goes through, so it keeps to plain comparisons:
// a sample's window end is computed once, and steps are walked by adding
// the step.
func (r *reader) fill(it chunkenc.Iterator, more []chunks.Meta, g Grid, off, window int64, skipStale bool) ([]float64, error) {
	var (
		out   []float64
		i     int
		ref   = g.Start - off // step i's reference time
		valid bool            // the current sample is a value
		cv    float64
		// A step sees the current sample while its reference time is
		// before limit: ct + window, or one later where windows are
		// left-closed.
		limit int64
	)
	extra := int64(0)
	if r.leftClosed {
		extra = 1
	}
	// Steps are written up to (not including) the first whose reference
	// time is the next sample's, the end of the series' samples giving
	// way to the end of the grid. The loop is written out rather than
	// called: a closure's captured variables cost a memory access a step.
	for samples := true; samples; {
		t := int64(math.MaxInt64)
		var v float64
		vt := it.Next()
		switch vt {
		case chunkenc.ValNone:
			if err := it.Err(); err != nil {
				return nil, err
			}
			if len(more) > 0 {
				it, more = more[0].Chunk.Iterator(it), more[1:]
				continue
			}
			samples = false
		case chunkenc.ValFloat:
			t, v = it.At()
			if skipStale && value.IsStaleNaN(v) {
				continue
			}
		default:
			return nil, unsupported("native histogram samples")
		}
		for ; i < g.N && ref < t; i, ref = i+1, ref+g.Step {
			if valid && ref < limit {
				if out == nil {
					out = r.buffer(g.N)
					for j := range i {
						out[j] = absent
					}
				}
				out[i] = cv
			} else if out != nil {
				out[i] = absent
			}
		}
		if i == g.N {
			break
		}
		valid, cv, limit = !value.IsStaleNaN(v), v, t+window+extra
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// window hands each series that vs selects its samples in the range
// window of one instant t: (t - offset - rng, t - offset], left-closed by
// Prometheus 2's rule, stale markers left out, in time order; series
// without any are left out. The slices are reused from series to series:
// at a week's range they are 10,080 samples, and growing fresh ones for
// every series cost more than the decoding.
func (r *reader) window(vs *parser.VectorSelector, t int64, rng time.Duration, each func(labels.Labels, []float64, []int64)) error {
	if vs.Timestamp != nil || vs.StartOrEnd != 0 || vs.Anchored || vs.Smoothed || vs.BypassEmptyMatcherCheck {
		return unsupported("selector modifiers in %s", vs)
	}
	maxt := t - vs.OriginalOffset.Milliseconds()
	mint := maxt - rng.Milliseconds()
	var v []float64
	var ts []int64
	return r.eachSeries(vs.LabelMatchers, &storage.SelectHints{Start: mint, End: maxt, Range: rng.Milliseconds()}, func(lset labels.Labels, it chunkenc.Iterator, more []chunks.Meta) error {
		v, ts = v[:0], ts[:0]
		for {
			vt := it.Next()
			if vt == chunkenc.ValNone {
				if err := it.Err(); err != nil {
					return err
				}
				if len(more) == 0 {
					break
				}
				it, more = more[0].Chunk.Iterator(it), more[1:]
				continue
			}
			if vt != chunkenc.ValFloat {
				return unsupported("native histogram samples")
			}
			at, f := it.At()
			if at > maxt {
				break
			}
			if at < mint || (at == mint && !r.leftClosed) || value.IsStaleNaN(f) {
				continue
			}
			v = append(v, f)
			ts = append(ts, at)
		}
		if len(v) > 0 {
			each(lset, v, ts)
		}
		return nil
	})
}

// newValues is a series' values, all absent, counted against the bound.
func (r *reader) newValues(n int) []float64 {
	v := r.buffer(n)
	fillAbsent(v)
	return v
}

// buffer is n values to be written, counted against the bound and kept
// for release.
func (r *reader) buffer(n int) []float64 {
	r.held += int64(n)
	v := getValues(n)
	r.buffers = append(r.buffers, v)
	return v
}

// release gives the evaluation's values back for the next one, once its
// answer is copied out: a week of minutes is 80 kB a series, and fresh
// memory for every series of every pass costs more in page faults and
// collection than the evaluation itself.
func (r *reader) release() {
	for _, v := range r.buffers {
		putValues(v)
	}
	r.buffers, r.cache = nil, nil
}

// overBudget says whether the evaluation holds more step values than the
// store's engine would let a query load: the engine then decides, and
// answers or fails with its own limit error.
func (r *reader) overBudget() error {
	if r.maxHeld > 0 && r.held > r.maxHeld {
		return unsupported("%d step values held, over the limit of %d samples", r.held, r.maxHeld)
	}
	return nil
}
