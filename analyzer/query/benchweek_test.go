package query

import (
	"context"
	"fmt"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/gpulens/gpulens/signals/native"

	"github.com/gpulens/gpulens/analyzer/source"
)

// TestWriteBenchWeek writes BenchmarkAnalyze's synthetic week of
// GPULENS_BENCH_GPUS GPUs (GPULENS_BENCH_DAYS days) into the TSDB directory
// GPULENS_BENCH_WRITE_DIR, compacted into blocks, for scripts/
// bench-report.sh to run the CLI on as a user would. Without that
// variable it does nothing: it is a tool, not a test.
func TestWriteBenchWeek(t *testing.T) {
	dir := os.Getenv("GPULENS_BENCH_WRITE_DIR")
	if dir == "" {
		t.Skip("GPULENS_BENCH_WRITE_DIR is not set")
	}
	sizes := benchSizes(t)
	if len(sizes) != 1 {
		t.Fatalf("GPULENS_BENCH_GPUS: want one size, got %v", sizes)
	}
	src, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f := &testFleet{src: src, app: src.Appender(context.Background())}
	generateFleet(t, f, sizes[0], benchDays(t)*24*60)
	if err := src.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	// The window's end, for the CLI's --until.
	t.Logf("until=%s", minute(benchDays(t)*24*60).Format("2006-01-02T15:04:05Z"))
}

// TestAnalyzeBenchWeek is scripts/bench-report.sh's "analysis alone": the
// week in GPULENS_BENCH_READ_DIR (written by TestWriteBenchWeek) opened
// read-only as the CLI opens --data-dir, and one analysis of it,
// sharded within the default sample budget as the CLI's is, and the CPU
// time and wall time it took in this process, in the line
// "analysis cpu_s=… wall_s=…". Without that variable it does nothing.
func TestAnalyzeBenchWeek(t *testing.T) {
	dir := os.Getenv("GPULENS_BENCH_READ_DIR")
	if dir == "" {
		t.Skip("GPULENS_BENCH_READ_DIR is not set")
	}
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	// The open is counted: every command opens the directory (replaying
	// its head, if the writer left one) before it analyses.
	c0, w0 := cpu(), time.Now()
	src, err := source.OpenEmbedded(dir, source.EmbeddedOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := fleet.Window{Start: t0, End: minute(benchDays(t) * 24 * 60), Step: time.Minute}
	res, err := AnalyzeSharded(context.Background(), src, native.Schema{}, w, Sharding{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("analysis cpu_s=%.1f wall_s=%.1f gpus=%d shards=%d\n", (cpu() - c0).Seconds(), time.Since(w0).Seconds(), len(res.GPUs), res.Shards)
}
