package session

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/source"
)

// reclaimerWeek writes, into the fixture fleet's TSDB, the series a
// gpulens reclaim scraped every 5 minutes over the week would leave: its
// cycles; two reclaims at day 2 and one at day 4 (the counter at 0 from
// the start, as NewMetrics creates it); one GPU released from day 2 on at
// $2.50 an hour, a second from day 4 on; and no dry-run reclaim.
func reclaimerWeek(t *testing.T, dir string) {
	t.Helper()
	db, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	app := db.Appender(context.Background())
	series := func(kv ...string) labels.Labels { return labels.FromStrings(kv...) }
	cycles := series("__name__", "gpulens_reclaim_cycles_total", "result", "success", "job", "gpulens-reclaim")
	reclaims := series("__name__", "gpulens_reclaim_actions_total", "action", "reclaim", "result", "success", "job", "gpulens-reclaim")
	dry := series("__name__", "gpulens_reclaim_actions_total", "action", "reclaim", "result", "dry-run", "job", "gpulens-reclaim")
	hours := series("__name__", "gpulens_reclaim_gpu_hours_total", "job", "gpulens-reclaim")
	usd := series("__name__", "gpulens_reclaim_usd_total", "job", "gpulens-reclaim")
	start := weekEnd.Add(-7 * 24 * time.Hour)
	day := 24 * time.Hour
	gpuHours := 0.0
	for i, ts := 0, start; !ts.After(weekEnd); i, ts = i+1, ts.Add(5*time.Minute) {
		n, gpus := 0.0, 0.0
		switch since := ts.Sub(start); {
		case since >= 4*day:
			n, gpus = 3, 2
		case since >= 2*day:
			n, gpus = 2, 1
		}
		ms := ts.UnixMilli()
		for _, s := range []struct {
			l labels.Labels
			v float64
		}{{cycles, float64(i)}, {reclaims, n}, {dry, 0}, {hours, gpuHours}, {usd, 2.5 * gpuHours}} {
			if _, err := app.Append(0, s.l, ms, s.v); err != nil {
				t.Fatal(err)
			}
		}
		gpuHours += gpus * 5.0 / 60 // released over the next 5 minutes
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.PersistHead(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestReclaimedReadsTheReclaimersSeries: the week's record comes from the
// series above. By hand: 3 reclaims (2 at day 2, 1 at day 4); one GPU
// released for the 5 days from day 2 and one more for the 3 from day 4,
// 120 h + 72 h = 192 GPU-hours, and 2.5 × 192 = $480. increase()
// extrapolates towards the range's edges, at most to where a counter
// would have been 0
// (https://prometheus.io/docs/prometheus/latest/querying/functions/#increase);
// these start at 0, so the figures are those, within 0.1%.
func TestReclaimedReadsTheReclaimersSeries(t *testing.T) {
	ctx := context.Background()
	dir := fixtureDir(t)
	reclaimerWeek(t, dir)
	s, err := Open(ctx, Config{DataDir: dir, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, NoKubernetes: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := s.Reclaimed(ctx)
	if r == nil || r.Reclaimed == nil {
		t.Fatalf("got %+v, want the week's record", r)
	}
	w := *r.Reclaimed
	t.Logf("read: %+v", w)
	if w.Workloads != 3 || w.DryRunWorkloads != 0 {
		t.Errorf("%d workloads reclaimed, %d run dry; want 3 and 0", w.Workloads, w.DryRunWorkloads)
	}
	near := func(got, want float64) bool { return math.Abs(got-want) <= 0.001*want }
	if !near(w.GPUHours, 192) || !near(w.USD, 480) {
		t.Errorf("%.2f GPU-hours, $%.2f; want 192 and $480 within 0.1%%", w.GPUHours, w.USD)
	}
}

// TestReclaimedAbsentIsNotZero: a store without the reclaimer's series
// has no record, and the report says it did not run, not that it
// reclaimed nothing.
func TestReclaimedAbsentIsNotZero(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{DataDir: fixtureDir(t), Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, NoKubernetes: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := s.Reclaimed(ctx); r != nil {
		t.Errorf("got %+v, want nil: the reclaimer did not run", r)
	}
}
