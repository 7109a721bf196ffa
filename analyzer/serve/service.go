package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/gpulens/gpulens/analyzer/metricname"
	"github.com/gpulens/gpulens/analyzer/notify"
	"github.com/gpulens/gpulens/analyzer/report"
	"github.com/gpulens/gpulens/analyzer/series"
	"github.com/gpulens/gpulens/vocab"
)

// Options configure a Service.
type Options struct {
	// Analyze runs one analysis; ctx ends after one Interval.
	Analyze  func(ctx context.Context) (*Result, error)
	Interval time.Duration
	// Notifier, when set, is told the findings of each successful analysis.
	Notifier *notify.Notifier
	// Health holds the service's own long-lived series (and the
	// notifier's); nil makes a new one.
	Health *metrics.Set
	// ReportURL is linked from every alert.
	ReportURL string
	Logger    *slog.Logger
	Now       func() time.Time
}

// Service is the periodic analysis and what it serves.
type Service struct {
	o       Options
	current atomic.Pointer[snapshot]
	stale   atomic.Bool
	// lastSuccess is the Unix nanoseconds of the last good analysis.
	lastSuccess atomic.Int64
	lastDur     atomic.Int64

	successes, failures, queries *metrics.Counter
}

// New returns a Service that has not analysed anything yet.
func New(o Options) *Service {
	if o.Health == nil {
		o.Health = metrics.NewSet()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Service{o: o}
	h := o.Health
	s.successes = h.NewCounter(metricname.Of(vocab.SeriesServeAnalyses, "result", "success"))
	s.failures = h.NewCounter(metricname.Of(vocab.SeriesServeAnalyses, "result", "failure"))
	s.queries = h.NewCounter(vocab.SeriesServeQueries)
	h.NewGauge(vocab.SeriesServeLastSuccess, func() float64 {
		return float64(s.lastSuccess.Load()) / 1e9
	})
	h.NewGauge(vocab.SeriesServeAnalysisDuration, func() float64 {
		return time.Duration(s.lastDur.Load()).Seconds()
	})
	h.NewGauge(vocab.SeriesServeStale, func() float64 {
		if s.stale.Load() {
			return 1
		}
		return 0
	})
	return s
}

// Run analyses at once, then every Interval, until ctx ends. A run that
// takes longer than the interval is cut off and counts as failed.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.o.Interval)
	defer t.Stop()
	for {
		s.Cycle(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Cycle runs one analysis and publishes it, or marks the last one stale.
func (s *Service) Cycle(ctx context.Context) {
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, s.o.Interval)
	res, err := s.o.Analyze(actx)
	cancel()
	if err == nil && res != nil && res.AllStale && s.current.Load() != nil {
		// Every node's data stopped: nothing in this analysis is judged
		// on current data, so the last good one stays, as after a
		// failure.
		s.lastDur.Store(int64(time.Since(start)))
		s.stale.Store(true)
		s.o.Logger.Warn("the data stops before the window's end on every node; serving the last good analysis",
			"nodes", len(res.Stale), "last_success", s.LastSuccess())
		return
	}
	if err == nil {
		err = s.publish(res)
	}
	dur := time.Since(start)
	s.lastDur.Store(int64(dur))
	if err != nil {
		if ctx.Err() != nil {
			return // shutting down: not a failure of the analysis
		}
		s.failures.Inc()
		s.stale.Store(s.current.Load() != nil)
		s.o.Logger.Error("analysis failed; serving the last good one", "err", err, "duration", dur.Round(time.Millisecond),
			"last_success", s.LastSuccess())
		return
	}
	s.successes.Inc()
	s.queries.Add(res.Queries)
	s.o.Logger.Info("analysis done", "findings", len(res.Findings), "queries", res.Queries, "duration", dur.Round(time.Millisecond))
}

// publish builds everything one analysis serves, then swaps it in: its
// findings, less those of the nodes whose data stopped, which keep the
// ones served before (keepStale).
func (s *Service) publish(res *Result) error {
	if res == nil || res.Report == nil {
		return errors.New("the analysis returned no report")
	}
	r := res.Report
	advice := s.keepStale(res)
	var rep, fs bytes.Buffer
	if err := report.Render(&rep, r, "json"); err != nil {
		return fmt.Errorf("report JSON: %w", err)
	}
	if err := report.WriteFindingsJSON(&fs, advice); err != nil {
		return fmt.Errorf("findings JSON: %w", err)
	}
	now := s.o.Now()
	snap := &snapshot{
		at:     now,
		window: r.Window,
		set: series.Build(series.Input{Findings: advice, Teams: r.Teams, CostKnown: r.CostKnown,
			WindowHours: r.Window.Hours, Ledger: r.Ledger, Pools: seriesPools(r.Consolidation)}),
		report:   rep.Bytes(),
		findings: fs.Bytes(),
		advice:   advice,
	}
	s.current.Store(snap)
	s.stale.Store(false)
	s.lastSuccess.Store(now.UnixNano())
	if s.o.Notifier != nil {
		s.o.Notifier.Update(alertsOf(advice, s.o.ReportURL))
	}
	return nil
}

// LastSuccess is when the last good analysis was published; zero before.
func (s *Service) LastSuccess() time.Time {
	n := s.lastSuccess.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// Ready is true when an analysis succeeded within three intervals.
func (s *Service) Ready() bool {
	last := s.LastSuccess()
	return !last.IsZero() && s.o.Now().Sub(last) <= 3*s.o.Interval
}

// WriteMetrics writes the current analysis's series and the service's
// own, with HELP and TYPE.
func (s *Service) WriteMetrics(w io.Writer) error {
	var set *metrics.Set
	if snap := s.current.Load(); snap != nil {
		set = snap.set
	}
	return series.Write(w, set, s.o.Health)
}

// WritePush writes the same series without metadata, for
// metrics.InitPushExtWithOptions.
func (s *Service) WritePush(w io.Writer) {
	if snap := s.current.Load(); snap != nil {
		snap.set.WritePrometheus(w)
	}
	s.o.Health.WritePrometheus(w)
}
