package source

import (
	"time"

	"github.com/prometheus/prometheus/storage"
)

// RawReader is a source whose raw samples the analysis can read itself,
// series by series from their chunks, instead of asking its PromQL engine
// to evaluate each pass at every step (analyzer/scan).
type RawReader interface {
	// RawSamples is the store's samples, with the rules its engine reads
	// them by; ok is false where the source cannot serve them (a remote
	// store without remote read).
	RawSamples() (s RawStore, ok bool)
}

// RawStore is a store's raw samples and its engine's rules for them.
type RawStore struct {
	storage.Queryable
	// Lookback is the engine's lookback delta for instant selectors.
	Lookback time.Duration
	// LeftClosed is Prometheus 2's rule: a lookback or range window
	// includes a sample at its very start ([t-5m, t]); Prometheus 3's
	// windows are left-open ((t-5m, t]).
	LeftClosed bool
	// MaxSamples is the engine's limit on the samples one query loads,
	// which the analysis's own reads keep to; zero where it has none of
	// its own to keep to (a remote store's raw reads, bounded by the
	// analysis's sharding).
	MaxSamples int
	// Release, where not nil, gives back the process's resident pages of
	// the store's files read so far (an embedded TSDB opened read-only
	// maps its blocks), for a reader that is done with a part of the
	// store; a later read faults them back in from the page cache.
	Release func()
}

var _ RawReader = (*Embedded)(nil)

// RawSamples reads the TSDB's chunks: its queryable serves them as chunks
// too (storage.ChunkQueryable), which the scan decodes itself.
func (e *Embedded) RawSamples() (RawStore, bool) {
	st := RawStore{Queryable: e.queryable, Lookback: lookbackDelta, MaxSamples: e.maxSamples}
	if e.ro != nil {
		st.Release = e.ro.dropPages
	}
	return st, true
}

// WrapRawSamples is src's raw samples as a source that wraps src reads
// them: opened, not nil, is called as each querier opens (an observer's
// count). The store's chunks stay readable where src serves them
// (storage.ChunkQueryable), wrapped alike. ok is false where src serves
// no raw samples. A wrapper does not narrow what is read: the analysis
// writes its scope into the expression the scan reads (query.Scope).
func WrapRawSamples(src Source, opened func()) (RawStore, bool) {
	rr, ok := src.(RawReader)
	if !ok {
		return RawStore{}, false
	}
	st, ok := rr.RawSamples()
	if !ok {
		return st, false
	}
	w := wrapped{q: st.Queryable, opened: opened}
	if cq, ok := st.Queryable.(storage.ChunkQueryable); ok {
		st.Queryable = wrappedChunks{wrapped: w, cq: cq}
	} else {
		st.Queryable = w
	}
	return st, true
}

type wrapped struct {
	q      storage.Queryable
	opened func()
}

func (w wrapped) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := w.q.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	w.opened()
	return q, nil
}

type wrappedChunks struct {
	wrapped
	cq storage.ChunkQueryable
}

func (w wrappedChunks) ChunkQuerier(mint, maxt int64) (storage.ChunkQuerier, error) {
	q, err := w.cq.ChunkQuerier(mint, maxt)
	if err != nil {
		return nil, err
	}
	w.opened()
	return q, nil
}
