package source

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
)

// TestEmbeddedLastSample guards issue 52's window end: the embedded store
// tells its last sample at or before an end from its blocks' and head's
// bounds, read-write and read-only, a persisted block's exactly (its
// MaxTime is exclusive: tsdb's RangeHead.BlockMaxTime is MaxTime()+1).
// On main 36bc8ff there was no LastSample, and a --data-dir read without
// --until ended at the reader's now.
func TestEmbeddedLastSample(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir, EmbeddedOptions{})
	from := t0.Add(30 * time.Hour)
	// Samples every minute in [from, from+6h): the last at from+6h-1m,
	// persisted into a block.
	appendSeries(t, e, labels.FromStrings("__name__", "x"), from, from.Add(6*time.Hour), constant(1))
	if err := e.PersistHead(context.Background()); err != nil {
		t.Fatal(err)
	}
	blockLast := from.Add(6*time.Hour - time.Minute)
	check := func(name string, e *Embedded, headLast time.Time) {
		for _, tc := range []struct {
			end  time.Time
			want time.Time
			ok   bool
		}{
			{from.Add(100 * time.Hour), headLast, true},
			{from.Add(2 * time.Hour), from.Add(2 * time.Hour), true},
			{from.Add(-time.Hour), time.Time{}, false},
		} {
			got, ok, err := e.LastSample(context.Background(), tc.end)
			if err != nil || ok != tc.ok || !got.Equal(tc.want) {
				t.Errorf("%s: LastSample(%s) = %s, %v, %v; want %s, %v", name, tc.end, got, ok, err, tc.want, tc.ok)
			}
		}
	}
	check("read-write, persisted", e, blockLast)
	// Samples in the head after the block: the head says its own last.
	appendSeries(t, e, labels.FromStrings("__name__", "x"), from.Add(6*time.Hour), from.Add(7*time.Hour), constant(1))
	headLast := from.Add(7*time.Hour - time.Minute)
	check("read-write, with a head", e, headLast)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	check("read-only", openTest(t, dir, EmbeddedOptions{ReadOnly: true}), headLast)
}
