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
}

var _ RawReader = (*Embedded)(nil)

// RawSamples reads the TSDB's chunks.
func (e *Embedded) RawSamples() (RawStore, bool) {
	return RawStore{Queryable: e.queryable, Lookback: lookbackDelta, MaxSamples: e.maxSamples}, true
}

// WrapRawSamples is src's raw samples with every querier passed through
// wrap, for a source that wraps another (a cluster's scope, an observer);
// ok is false where src serves none.
func WrapRawSamples(src Source, wrap func(storage.Querier) storage.Querier) (RawStore, bool) {
	rr, ok := src.(RawReader)
	if !ok {
		return RawStore{}, false
	}
	st, ok := rr.RawSamples()
	if !ok {
		return st, false
	}
	q := st.Queryable
	st.Queryable = storage.QueryableFunc(func(mint, maxt int64) (storage.Querier, error) {
		inner, err := q.Querier(mint, maxt)
		if err != nil {
			return nil, err
		}
		return wrap(inner), nil
	})
	return st, true
}
