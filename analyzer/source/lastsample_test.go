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

// TestLastSampleOfABlockCutAtItsRange: a block whose meta.json says an
// end past its last sample (the out-of-order head is written one block
// per 2h range, whose MaxTime is the range's end, as the demo's is: its
// week ending at 17:07 was one block to 18:00) is read to its last chunk,
// so a --data-dir read without --until ends where the data does, not up to
// two hours later. The bound alone gave the range's end.
func TestLastSampleOfABlockCutAtItsRange(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir, EmbeddedOptions{})
	from := t0.Add(30 * time.Hour) // on a 2h boundary
	// In order every minute to from+5h-1m, then one sample out of order
	// inside the last 2h range [from+4h, from+6h).
	appendSeries(t, e, labels.FromStrings("__name__", "x"), from, from.Add(5*time.Hour), constant(1))
	app := e.Appender(context.Background())
	if _, err := app.Append(0, labels.FromStrings("__name__", "x"), from.Add(4*time.Hour+30*time.Minute+30*time.Second).UnixMilli(), 2); err != nil {
		t.Fatal(err)
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := e.PersistHead(context.Background()); err != nil {
		t.Fatal(err)
	}
	var boundPast bool
	for _, b := range e.db.Blocks() {
		boundPast = boundPast || b.Meta().MaxTime > from.Add(5*time.Hour).UnixMilli()
	}
	if !boundPast {
		t.Fatal("no block's bound lies past its data: the case proves nothing")
	}
	want := from.Add(5*time.Hour - time.Minute)
	for name, e := range map[string]*Embedded{"read-write": e} {
		got, ok, err := e.LastSample(context.Background(), from.Add(100*time.Hour))
		if err != nil || !ok || !got.Equal(want) {
			t.Errorf("%s: LastSample = %s, %v, %v; want %s", name, got, ok, err, want)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	ro := openTest(t, dir, EmbeddedOptions{ReadOnly: true})
	if got, ok, err := ro.LastSample(context.Background(), from.Add(100*time.Hour)); err != nil || !ok || !got.Equal(want) {
		t.Errorf("read-only: LastSample = %s, %v, %v; want %s", got, ok, err, want)
	}
}
