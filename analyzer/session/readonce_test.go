package session

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/source"
)

// queryCounter counts every query a session sends, instant and range.
type queryCounter struct {
	source.Source
	rq           source.RangeQuerier
	instant, rng *atomic.Int32
}

func (c queryCounter) Query(ctx context.Context, q string, ts time.Time) (model.Vector, error) {
	c.instant.Add(1)
	return c.Source.Query(ctx, q, ts)
}

func (c queryCounter) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	c.rng.Add(1)
	return c.rq.QueryRange(ctx, q, start, end, step)
}

// TestReportReadsTheWindowOnce (issue 43, "one read per report"): a report
// is the analysis of this window and of the previous one, its charts and
// its consolidation plan; the charts and the plan come from the analysis's
// own passes, so the report sends exactly the queries that the analysis
// without charts sends, however many charts and lanes it draws, and the
// reclaimer's record (Reclaimed: one query where no reclaimer ran).
// Before, the plan read the window again in six queries and the charts in
// two range queries.
func TestReportReadsTheWindowOnce(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	dir, _ := twoClusters(t)
	count := func(run func(s *Session) error) (int32, int32) {
		t.Helper()
		s, err := Open(ctx, Config{DataDir: dir, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, NoKubernetes: "test"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var instant, rng atomic.Int32
		s.src = queryCounter{Source: s.src, rq: s.src.(source.RangeQuerier), instant: &instant, rng: &rng}
		if err := run(s); err != nil {
			t.Fatal(err)
		}
		return instant.Load(), rng.Load()
	}
	ai, ar := count(func(s *Session) error {
		_, err := s.Analyze(ctx, 0)
		if s.Reclaimed(ctx) != nil {
			t.Fatal("a reclaimer's record in a store where none ran")
		}
		return err
	})
	ri, rr := count(func(s *Session) error {
		r, a, err := s.Report(ctx, 28)
		if err == nil && (r.Consolidation == nil || r.Consolidation.Unavailable != "" || a.Timeline == nil) {
			t.Fatalf("consolidation %+v, timeline %v: want both, or the test proves nothing", r.Consolidation, a.Timeline != nil)
		}
		return err
	})
	t.Logf("analysis alone: %d instant and %d range queries; report with charts and plan: %d and %d", ai, ar, ri, rr)
	if ri != ai || rr != ar {
		t.Errorf("the report sent %d instant and %d range queries, the analysis alone %d and %d: the charts or the plan read the window again", ri, rr, ai, ar)
	}
}
