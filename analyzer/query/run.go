package query

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/scan"
	"github.com/gpulens/gpulens/analyzer/source"
)

// queryConcurrency is how many queries are in flight at once. The queries
// are independent and every Source is safe for concurrent use; on the
// embedded engine each query is single-threaded, so two use two cores,
// and each in-flight query holds its subquery's matrix (series × steps)
// in memory, so the limit also bounds the analysis's peak memory. Two is
// a good fit for a small analysis host and polite to a remote Prometheus.
const queryConcurrency = 2

// runQueries evaluates qs over sc's series, at most queryConcurrency at a
// time: an instant query at w.End, or a pass (namedQuery.series) at every
// step of w. It hands each answer to use, with whether it was read from
// raw samples (passWindow), in the order of qs, so the result does not
// depend on which query finished first. An answer is released as soon as
// it has been used. The first failure in the order of qs is returned and
// cancels the queries still running; a query that fails is not cancelled
// early by another's failure, so the error reported is always the real one.
func runQueries(ctx context.Context, src source.Source, sc Scope, qs []namedQuery, w fleet.Window, use func(namedQuery, model.Vector, passAnswer, bool)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		vec  model.Vector
		pass passAnswer
		raw  bool
		err  error
	}
	answers := make([]chan answer, len(qs))
	for i := range answers {
		answers[i] = make(chan answer, 1)
	}
	sem := make(chan struct{}, queryConcurrency)
	go func() {
		for i, q := range qs {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				// Answer the remaining queries so the reader never blocks.
				for _, ch := range answers[i:] {
					ch <- answer{err: ctx.Err()}
				}
				return
			}
			go func() {
				defer func() { <-sem }()
				if q.series == nil {
					vec, raw, err := instantQuery(ctx, src, sc, q.name, q.expr, w.End)
					answers[i] <- answer{vec: vec, raw: raw, err: err}
					return
				}
				pass, raw, err := passWindow(ctx, src, sc, q, w)
				answers[i] <- answer{pass: pass, raw: raw, err: err}
			}()
		}
	}()
	for i, q := range qs {
		ans := <-answers[i]
		if ans.err != nil {
			return fmt.Errorf("analysis query %q: %w", q.name, ans.err)
		}
		use(q, ans.vec, ans.pass, ans.raw)
		if ans.pass.release != nil {
			ans.pass.release()
		}
		answers[i] = nil
	}
	return nil
}

// passWindow is a pass's series at the window's steps, of sc's series
// alone (its expression scoped once, for the scan and the engine alike):
// read from the store's raw samples (scan.RangeSteps, its arrays lent
// until the answer's release) where src serves them and the expression is
// one the scan evaluates the engine's way, or from range queries
// (queryWindow).
// raw says they were read from raw samples.
func passWindow(ctx context.Context, src source.Source, sc Scope, q namedQuery, w fleet.Window) (ans passAnswer, raw bool, err error) {
	expr, err := sc.apply(q.expr)
	if err != nil {
		return passAnswer{}, false, err
	}
	if rr, ok := src.(source.RawReader); ok {
		if store, ok := rr.RawSamples(); ok {
			g := scan.Grid{Start: firstStep(w), Step: w.Step.Milliseconds(), N: w.ExpectedSteps()}
			st, err := scan.RangeSteps(ctx, store.Queryable, expr, g, scan.Rules{Lookback: store.Lookback, LeftClosed: store.LeftClosed, MaxSamples: store.MaxSamples})
			if err == nil {
				return stepsOfScan(st), true, nil
			}
			if !errors.Is(err, scan.ErrUnsupported) {
				return passAnswer{}, false, err
			}
			slog.Debug("analysis pass read through PromQL", "pass", q.name, "reason", err)
		}
	}
	rq, err := rangeQuerier(src)
	if err != nil {
		return passAnswer{}, false, err
	}
	mat, err := queryWindow(ctx, rq, expr, w)
	if err != nil {
		return passAnswer{}, false, err
	}
	return stepsOfMatrix(mat, w), false, nil
}

// instantQuery is an instant query's answer at t over sc's series (expr
// scoped once, for the scan and the engine alike): from the store's raw
// samples where it serves them and the scan evaluates the expression the
// engine's way (scan.Instant), or from the store's engine.
func instantQuery(ctx context.Context, src source.Source, sc Scope, name, expr string, t time.Time) (model.Vector, bool, error) {
	expr, err := sc.apply(expr)
	if err != nil {
		return nil, false, err
	}
	if rr, ok := src.(source.RawReader); ok {
		if store, ok := rr.RawSamples(); ok {
			vec, err := scan.Instant(ctx, store.Queryable, expr, t, scan.Rules{Lookback: store.Lookback, LeftClosed: store.LeftClosed, MaxSamples: store.MaxSamples})
			if err == nil {
				return vec, true, nil
			}
			if !errors.Is(err, scan.ErrUnsupported) {
				return nil, false, err
			}
			slog.Debug("analysis query read through PromQL", "query", name, "reason", err)
		}
	}
	vec, err := src.Query(ctx, expr, t)
	return vec, false, err
}
