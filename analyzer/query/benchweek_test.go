package query

import (
	"context"
	"os"
	"testing"

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
