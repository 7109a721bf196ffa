package source

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/tsdb"
)

var t0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func openTest(t *testing.T, dir string, o EmbeddedOptions) *Embedded {
	t.Helper()
	e, err := OpenEmbedded(dir, o)
	if err != nil {
		t.Fatalf("OpenEmbedded: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// appendSeries writes one sample a minute in [from, to).
func appendSeries(t *testing.T, e *Embedded, lset labels.Labels, from, to time.Time, v func(time.Time) float64) {
	t.Helper()
	app := e.Appender(context.Background())
	for ts := from; ts.Before(to); ts = ts.Add(time.Minute) {
		if _, err := app.Append(0, lset, ts.UnixMilli(), v(ts)); err != nil {
			t.Fatalf("append %s at %s: %v", lset, ts, err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatalf("commit: %v", err)
	}
}

func constant(v float64) func(time.Time) float64 { return func(time.Time) float64 { return v } }

func TestEmbeddedQuery(t *testing.T) {
	e := openTest(t, t.TempDir(), EmbeddedOptions{})
	a := labels.FromStrings("__name__", "util", "gpu", "0")
	b := labels.FromStrings("__name__", "util", "gpu", "1")
	appendSeries(t, e, a, t0, t0.Add(time.Hour), constant(0.25))
	appendSeries(t, e, b, t0, t0.Add(time.Hour), func(ts time.Time) float64 {
		if ts.Before(t0.Add(30 * time.Minute)) {
			return 0
		}
		return 1
	})
	end := t0.Add(59 * time.Minute)

	tests := []struct {
		name string
		q    string
		want map[string]float64 // keyed by gpu label; "" for a scalar
	}{
		{"selector", `util`, map[string]float64{"0": 0.25, "1": 1}},
		{"over time", `avg_over_time(util[1h])`, map[string]float64{"0": 0.25, "1": 0.5}},
		{"subquery", `count_over_time(util[30m:1m])`, map[string]float64{"0": 30, "1": 30}},
		{"aggregation", `sum(util)`, map[string]float64{"": 1.25}},
		{"scalar", `scalar(sum(util)) * 2`, map[string]float64{"": 2.5}},
		{"at modifier", fmt.Sprintf(`util @ %d`, t0.Add(10*time.Minute).Unix()), map[string]float64{"0": 0.25, "1": 0}},
		{"negative offset", fmt.Sprintf(`util offset -3m @ %d`, t0.Add(29*time.Minute).Unix()), map[string]float64{"0": 0.25, "1": 1}},
		{"negative offset past the data", `util offset -10m`, map[string]float64{}},
		{"no data", `nothing_here`, map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vec, err := e.Query(context.Background(), tt.q, end)
			if err != nil {
				t.Fatalf("Query(%q): %v", tt.q, err)
			}
			got := map[string]float64{}
			for _, s := range vec {
				got[string(s.Metric["gpu"])] = float64(s.Value)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("Query(%q) = %v, want %v", tt.q, got, tt.want)
			}
			for k, w := range tt.want {
				if g, ok := got[k]; !ok || g != w {
					t.Errorf("Query(%q)[%q] = %v, want %v", tt.q, k, g, w)
				}
			}
		})
	}
}

func TestEmbeddedQueryErrorNamesSource(t *testing.T) {
	dir := t.TempDir()
	e := openTest(t, dir, EmbeddedOptions{})
	_, err := e.Query(context.Background(), `sum(`, t0)
	if err == nil || !strings.Contains(err.Error(), "embedded TSDB at "+dir) {
		t.Fatalf("Query(bad) error = %v, want one naming the directory", err)
	}
}

func TestEmbeddedMaxSamples(t *testing.T) {
	e := openTest(t, t.TempDir(), EmbeddedOptions{MaxSamples: 10})
	appendSeries(t, e, labels.FromStrings("__name__", "x"), t0, t0.Add(time.Hour), constant(1))
	if _, err := e.Query(context.Background(), `max_over_time(x[1h])`, t0.Add(time.Hour)); err == nil {
		t.Fatal("query over 60 samples with MaxSamples 10 succeeded")
	}
}

// closedTSDB writes ten minutes of x = 7 into a new TSDB and closes it.
func closedTSDB(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	e, err := OpenEmbedded(dir, EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	appendSeries(t, e, labels.FromStrings("__name__", "x"), t0, t0.Add(10*time.Minute), constant(7))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestEmbeddedReopenPersists(t *testing.T) {
	dir := closedTSDB(t)

	for _, ro := range []bool{false, true} {
		e := openTest(t, dir, EmbeddedOptions{ReadOnly: ro})
		vec, err := e.Query(context.Background(), `sum_over_time(x[10m])`, t0.Add(9*time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if len(vec) != 1 || vec[0].Value != 70 {
			t.Errorf("read-only=%v: after reopen got %v, want 70", ro, vec)
		}
		_ = e.Close()
	}
}

func TestEmbeddedReadOnlyRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir, EmbeddedOptions{}).Close()
	e := openTest(t, dir, EmbeddedOptions{ReadOnly: true})
	app := e.Appender(context.Background())
	if _, err := app.Append(0, labels.FromStrings("__name__", "x"), 0, 1); err != ErrReadOnly {
		t.Errorf("Append on read-only = %v, want ErrReadOnly", err)
	}
	if err := e.Compact(context.Background()); err != ErrReadOnly {
		t.Errorf("Compact on read-only = %v, want ErrReadOnly", err)
	}
	if _, err := OpenEmbedded(filepath.Join(dir, "missing"), EmbeddedOptions{ReadOnly: true}); err == nil {
		t.Error("read-only open of a missing directory succeeded")
	}
}

func TestOpenEmbeddedDirectoryChecks(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) string
		wantErr string
	}{
		{"missing is created", func(t *testing.T, dir string) string { return filepath.Join(dir, "a", "b") }, ""},
		{"empty", func(t *testing.T, dir string) string { return dir }, ""},
		{"existing TSDB", func(t *testing.T, dir string) string {
			e, err := OpenEmbedded(dir, EmbeddedOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_ = e.Close()
			return dir
		}, ""},
		{"other files", func(t *testing.T, dir string) string {
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hi"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "photos"), 0o750); err != nil {
				t.Fatal(err)
			}
			return dir
		}, "is not a Prometheus TSDB"},
		{"a file", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "file")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.prepare(t, t.TempDir())
			e, err := OpenEmbedded(dir, EmbeddedOptions{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("OpenEmbedded(%s): %v", dir, err)
				}
				_ = e.Close()
				return
			}
			if err == nil {
				_ = e.Close()
				t.Fatalf("OpenEmbedded(%s) succeeded, want error %q", dir, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q should contain %q and the directory", err, tt.wantErr)
			}
		})
	}
}

func TestEmbeddedRetention(t *testing.T) {
	if got := tsdbOptions(6 * time.Hour); got.RetentionDuration != (6*time.Hour).Milliseconds() ||
		got.OutOfOrderTimeWindow != (6*time.Hour).Milliseconds() || got.MaxBlockDuration != got.MinBlockDuration {
		t.Errorf("tsdbOptions(6h) = retention %d, ooo %d, max block %d", got.RetentionDuration, got.OutOfOrderTimeWindow, got.MaxBlockDuration)
	}
	if got := openTest(t, t.TempDir(), EmbeddedOptions{}).Retention(); got != DefaultRetention {
		t.Errorf("default retention = %v, want %v", got, DefaultRetention)
	}

	// Behaviour: a day of data with 6h retention keeps only recent blocks.
	e := openTest(t, t.TempDir(), EmbeddedOptions{Retention: 6 * time.Hour})
	appendSeries(t, e, labels.FromStrings("__name__", "x"), t0, t0.Add(24*time.Hour), constant(1))
	if err := e.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	at := func(ts time.Time) int {
		vec, err := e.Query(context.Background(), `count_over_time(x[1h])`, ts)
		if err != nil {
			t.Fatal(err)
		}
		return len(vec)
	}
	if at(t0.Add(2*time.Hour)) != 0 {
		t.Error("samples 22h older than the newest survived a 6h retention")
	}
	if at(t0.Add(23*time.Hour)) != 1 {
		t.Error("recent samples were dropped")
	}
}

func TestEmbeddedAcceptsBackfill(t *testing.T) {
	e := openTest(t, t.TempDir(), EmbeddedOptions{})
	// One series after another, each a week long: the second series goes
	// back a week behind the head's max time.
	from, to := t0, t0.Add(7*24*time.Hour)
	appendSeries(t, e, labels.FromStrings("__name__", "x", "i", "1"), from, to, constant(1))
	appendSeries(t, e, labels.FromStrings("__name__", "x", "i", "2"), from, to, constant(1))
	// Out of order within one series: an older sample after newer ones.
	appendSeries(t, e, labels.FromStrings("__name__", "x", "i", "1"), from.Add(-time.Hour), from, constant(1))
	vec, err := e.Query(context.Background(), `count_over_time(x[1w])`, to.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(vec) != 2 || vec[0].Value != 7*24*60 || vec[1].Value != 7*24*60 {
		t.Errorf("count over the week = %v, want two series of %d", vec, 7*24*60)
	}
}

func TestEmbeddedMetricNamesAndExposition(t *testing.T) {
	e := openTest(t, t.TempDir(), EmbeddedOptions{})
	data, err := os.ReadFile("testdata/gpus.prom")
	if err != nil {
		t.Fatal(err)
	}
	app := e.Appender(context.Background())
	series, err := AppendExposition(app, data, "", t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	if len(series) != 7 {
		t.Errorf("appended %d series, want 7 (3 gauges and counters, 4 classic histogram series)", len(series))
	}
	names, err := e.MetricNames(context.Background(), t0.Add(-time.Hour), t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gpulens_gpu_utilization_ratio", "gpulens_gpu_energy_joules_total", "gpulens_exporter_collection_duration_seconds_bucket"} {
		if !slices.Contains(names, want) {
			t.Errorf("MetricNames = %v, missing %s", names, want)
		}
	}
	vec, err := e.Query(context.Background(), `sum(gpulens_gpu_utilization_ratio)`, t0)
	if err != nil || len(vec) != 1 || vec[0].Value != model.SampleValue(1) {
		t.Errorf("sum of fixture utilization = %v, %v; want 1", vec, err)
	}
	if _, err := AppendExposition(e.Appender(context.Background()), []byte("not a metric line {"), "", t0); err == nil {
		t.Error("garbage exposition parsed without error")
	}
}

// TestEmbeddedReadOnlyServesManyQueriesWithoutWriting: the analysis issues
// dozens of queries, two at a time; a read-only source must serve them all
// and leave the directory exactly as it found it (no WAL truncation, no
// compaction, no lock file).
func TestEmbeddedReadOnlyServesManyQueriesWithoutWriting(t *testing.T) {
	dir := closedTSDB(t)
	before := treeSnapshot(t, dir)

	ro := openTest(t, dir, EmbeddedOptions{ReadOnly: true})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 10 {
		wg.Add(2)
		for range 2 {
			go func() {
				defer wg.Done()
				vec, err := ro.Query(context.Background(), `sum_over_time(x[10m])`, t0.Add(9*time.Minute))
				if err == nil && (len(vec) != 1 || vec[0].Value != 70) {
					err = fmt.Errorf("got %v, want 70", vec)
				}
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after := treeSnapshot(t, dir); after != before {
		t.Errorf("the read-only source changed the directory:\nbefore %s\nafter  %s", before, after)
	}
}

// treeSnapshot lists every file under dir with its size and mtime.
func treeSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s:%d:%d;", strings.TrimPrefix(path, dir), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestEmbeddedReadOnlySeesBlocksHeadAndOutOfOrder: a directory closed
// mid-stream holds blocks, an in-order head and out-of-order samples that
// exist only in the write-ahead logs. The read-only source, which replays the head once
// for all queries, must answer as the read-write one does, and still
// leave the directory as it found it.
func TestEmbeddedReadOnlySeesBlocksHeadAndOutOfOrder(t *testing.T) {
	dir := t.TempDir()
	// tsdb itself, with its background compaction off: the embedded
	// source's loop would compact the out-of-order samples into a block
	// before Close, and the WBL would be empty.
	db, err := tsdb.Open(dir, nil, nil, tsdbOptions(DefaultRetention), nil)
	if err != nil {
		t.Fatal(err)
	}
	db.DisableCompactions()
	write := func(lset labels.Labels, from, to time.Time, v float64) {
		app := db.Appender(context.Background())
		for ts := from; ts.Before(to); ts = ts.Add(time.Minute) {
			if _, err := app.Append(0, lset, ts.UnixMilli(), v); err != nil {
				t.Fatal(err)
			}
		}
		if err := app.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	end := t0.Add(12 * time.Hour)
	write(labels.FromStrings("__name__", "x", "i", "1"), t0, end, 1)
	if err := db.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Before the head's min time: out of order; fewer than the 32 samples
	// that would be cut into an m-mapped chunk, so they are only in the
	// logs.
	write(labels.FromStrings("__name__", "x", "i", "2"), t0.Add(time.Hour), t0.Add(time.Hour+10*time.Minute), 2)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var blocks int
	for _, ent := range entries {
		if _, err := os.Stat(filepath.Join(dir, ent.Name(), "meta.json")); err == nil {
			blocks++
		}
	}
	if blocks == 0 {
		t.Fatal("fixture has no block: the test would not cover blocks")
	}
	if _, err := os.Stat(filepath.Join(dir, "wbl")); err != nil {
		t.Fatalf("fixture has no WBL: %v", err)
	}
	before := treeSnapshot(t, dir)

	queries := []string{
		`count_over_time(x[12h])`,
		`sum_over_time(x[12h])`,
		`count_over_time(x[90m])`,
	}
	answers := func(e *Embedded) []string {
		var out []string
		for _, q := range queries {
			vec, err := e.Query(context.Background(), q, end.Add(-time.Minute))
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			out = append(out, vec.String())
		}
		return out
	}
	ro := openTest(t, dir, EmbeddedOptions{ReadOnly: true})
	got := answers(ro)
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after := treeSnapshot(t, dir); after != before {
		t.Errorf("the read-only source changed the directory:\nbefore %s\nafter  %s", before, after)
	}
	want := answers(openTest(t, dir, EmbeddedOptions{}))
	if !slices.Equal(got, want) {
		t.Errorf("read-only answers differ from read-write:\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(want[0], "=> 720") || !strings.Contains(want[0], "=> 10") {
		t.Errorf("count over 12h = %s, want 720 for i=1 and 10 for i=2", want[0])
	}
}

// TestEmbeddedPersistHead: after PersistHead every sample is in a block, so
// a read-only open has no head to replay, and the answers do not change.
func TestEmbeddedPersistHead(t *testing.T) {
	dir := t.TempDir()
	rw := openTest(t, dir, EmbeddedOptions{})
	end := t0.Add(5 * time.Hour)
	appendSeries(t, rw, labels.FromStrings("__name__", "x", "i", "1"), t0, end, constant(1))
	appendSeries(t, rw, labels.FromStrings("__name__", "x", "i", "2"), t0, t0.Add(10*time.Minute), constant(2))
	const q = `count_over_time(x[5h])`
	before, err := rw.Query(context.Background(), q, end.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.PersistHead(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}

	ro := openTest(t, dir, EmbeddedOptions{ReadOnly: true})
	// The WAL's checkpoint may still name series; it holds no samples.
	if h := ro.ro.head.Head(); h.MinTime() <= h.MaxTime() {
		t.Errorf("the replayed head holds samples in [%d, %d], want none", h.MinTime(), h.MaxTime())
	}
	after, err := ro.Query(context.Background(), q, end.Add(-time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if after.String() != before.String() {
		t.Errorf("after PersistHead: %s, before: %s", after, before)
	}
}

// A subquery without a step takes the default evaluation interval, as on a
// Prometheus server, instead of crashing the engine.
func TestStepLessSubquery(t *testing.T) {
	src, err := OpenEmbedded(t.TempDir(), EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	app := src.Appender(context.Background())
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	for i := range 60 {
		if _, err := app.Append(0, labels.FromStrings("__name__", "x"), t0.Add(time.Duration(i)*time.Minute).UnixMilli(), 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	vec, err := src.Query(context.Background(), "count_over_time(x[30m:])", t0.Add(59*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(vec) != 1 || vec[0].Value != 30 {
		t.Errorf("count_over_time(x[30m:]) = %v, want 30 one-minute steps", vec)
	}
}
