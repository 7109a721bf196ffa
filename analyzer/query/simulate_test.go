package query_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	simfleet "github.com/gpulens/gpulens/exporter/sim/fleet"
)

// simulate writes scenario s over w into a new embedded TSDB, each node's
// series through the sink wrap builds around the store's own (nil: as
// gpulens-exporter writes them), and returns the store, closed when the
// test ends.
func simulate(t *testing.T, s *sim.Scenario, w fleet.Window, wrap func(node string, tsdb *simfleet.TSDBSink) simfleet.Sink) *source.Embedded {
	t.Helper()
	ctx := context.Background()
	db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var n atomic.Int64
	err = simfleet.Run(ctx, simfleet.Options{Scenario: s, Start: w.Start, End: w.End, Step: w.Step}, func(node string) simfleet.Sink {
		tsdb := simfleet.NewTSDBSink(ctx, db, &n)
		if wrap == nil {
			return tsdb
		}
		return wrap(node, tsdb)
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}
