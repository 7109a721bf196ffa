package session

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/source"
)

// namesCounter counts the listings of metric names, the query that
// detecting the schema is (source.Detect).
type namesCounter struct {
	queryCounter
	names *atomic.Int32
}

func (c namesCounter) MetricNames(ctx context.Context, start, end time.Time) ([]string, error) {
	c.names.Add(1)
	return c.queryCounter.MetricNames(ctx, start, end)
}

// TestSchemaDetectedOncePerSession (issue 55: no hidden fields): the
// schema is fixed when the session is made, detected there once where
// --schema leaves it to the data, and every use case reads it. Before,
// the first method to need it detected it and stored it for the others,
// so that once per session held by the order the methods ran in.
//
// The names are listed for more than detection (query's coverage of each
// pass), so the detections are the listings of a session left to detect
// less those of one given --schema native, on the same store: one for
// each use case alone, and one for all four on one session.
func TestSchemaDetectedOncePerSession(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	dir, _ := twoClusters(t)
	listings := func(schema string, run func(s *Session) error) int32 {
		t.Helper()
		db, err := source.OpenEmbedded(dir, source.EmbeddedOptions{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var names, instant, rng atomic.Int32
		src := namesCounter{queryCounter{Source: db, rq: db, instant: &instant, rng: &rng}, &names}
		s, err := New(ctx, src, Config{Schema: schema, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, NoKubernetes: "test", ClusterLabel: "cluster"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := run(s); err != nil {
			t.Fatal(err)
		}
		return names.Load()
	}
	useCases := []struct {
		name string
		run  func(s *Session) error
	}{
		{"report", func(s *Session) error { _, _, err := s.Report(ctx, 0); return err }},
		{"plan", func(s *Session) error { _, err := s.Plan(ctx, PlanOptions{}); return err }},
		{"plan --as-is", func(s *Session) error { _, err := s.Plan(ctx, PlanOptions{AsIs: true}); return err }},
		{"quota", func(s *Session) error {
			_, _, err := s.Quotas(ctx)
			if errors.Is(err, ErrNoCluster) {
				return nil // the fixture holds no quota series: read all the same
			}
			return err
		}},
	}
	all := func(s *Session) error {
		for _, uc := range useCases {
			if err := uc.run(s); err != nil {
				return err
			}
		}
		return nil
	}
	for _, uc := range append(useCases, struct {
		name string
		run  func(s *Session) error
	}{"all four", all}) {
		auto, named := listings(SchemaAuto, uc.run), listings("native", uc.run)
		if auto-named != 1 {
			t.Errorf("%s: the metric names listed %d times left to detect, %d times with --schema native: %d detections, want 1", uc.name, auto, named, auto-named)
		}
	}
}
