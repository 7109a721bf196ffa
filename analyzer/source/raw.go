package source

import (
	"time"

	"github.com/prometheus/prometheus/storage"
)

// RawReader is a source whose raw samples the analysis can read itself,
// series by series from their chunks, instead of asking its PromQL engine
// to evaluate each pass at every step (analyzer/scan).
type RawReader interface {
	// RawSamples is the store's samples and the lookback delta its engine
	// gives instant selectors; ok is false where the source cannot serve
	// them (a remote store without remote read).
	RawSamples() (q storage.Queryable, lookback time.Duration, ok bool)
}

var _ RawReader = (*Embedded)(nil)

// RawSamples reads the TSDB's chunks.
func (e *Embedded) RawSamples() (storage.Queryable, time.Duration, bool) {
	return e.queryable, lookbackDelta, true
}
