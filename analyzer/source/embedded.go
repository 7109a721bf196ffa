package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

const (
	// DefaultRetention matches Prometheus's own default.
	DefaultRetention  = 15 * 24 * time.Hour
	defaultMaxSamples = 50_000_000
	defaultTimeout    = 2 * time.Minute
	lookbackDelta     = 5 * time.Minute
	// maxBlockDuration caps compacted blocks like Prometheus does, so
	// retention can drop old data in reasonably small pieces.
	maxBlockDuration = 31 * 24 * time.Hour
)

// EmbeddedOptions configures an in-process TSDB and PromQL engine.
type EmbeddedOptions struct {
	// Retention is how long samples are kept, measured back from the newest
	// sample. Zero means 15d.
	Retention time.Duration
	Logger    *slog.Logger
	// MaxSamples bounds the samples one query may hold in memory. Zero
	// means 50M, enough for a week of one-minute subqueries over a large
	// fleet while still refusing a runaway query.
	MaxSamples int
	// Timeout bounds one query. Zero means 2m.
	Timeout time.Duration
	// ReadOnly opens an existing directory, for example a copy of a
	// Prometheus data directory, without writing to it. Appending fails.
	ReadOnly bool
}

// Embedded is a Source backed by Prometheus's own tsdb and promql packages
// over a local directory.
type Embedded struct {
	dir       string
	db        *tsdb.DB           // nil when read-only
	ro        *readOnlyQueryable // nil when read-write
	roClose   sync.Once
	roErr     error
	queryable storage.Queryable
	// maxSamples is the engine's limit, which raw reads keep to too.
	maxSamples int
	engine     *promql.Engine
	logger     *slog.Logger
	retention  time.Duration
}

var _ Source = (*Embedded)(nil)

// OpenEmbedded opens, or creates, the TSDB in dir. A directory holding
// something other than a TSDB is refused rather than filled with blocks.
func OpenEmbedded(dir string, o EmbeddedOptions) (*Embedded, error) {
	if o.Retention < 0 || o.MaxSamples < 0 || o.Timeout < 0 {
		return nil, fmt.Errorf("embedded TSDB at %s: retention, max samples and timeout must not be negative", dir)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := checkTSDBDir(dir, o.ReadOnly); err != nil {
		return nil, err
	}
	if err := checkBlockMetas(dir); err != nil {
		return nil, err
	}
	e := &Embedded{dir: dir, logger: logger, retention: o.Retention}
	if e.retention == 0 {
		e.retention = DefaultRetention
	}

	if o.ReadOnly {
		ro, err := openReadOnly(dir, logger)
		if err != nil {
			return nil, err
		}
		e.ro, e.queryable = ro, ro
	} else {
		db, err := tsdb.Open(dir, logger, nil, tsdbOptions(e.retention), nil)
		if err != nil {
			return nil, fmt.Errorf("embedded TSDB at %s: %w", dir, err)
		}
		noAutoCompaction(db)
		e.db, e.queryable = db, db
	}

	maxSamples := o.MaxSamples
	if maxSamples == 0 {
		maxSamples = defaultMaxSamples
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = defaultTimeout
	}
	e.maxSamples = maxSamples
	e.engine = promql.NewEngine(promql.EngineOpts{
		Logger:               logger,
		MaxSamples:           maxSamples,
		Timeout:              timeout,
		LookbackDelta:        lookbackDelta,
		EnableAtModifier:     true,
		EnableNegativeOffset: true,
		// A subquery without a step ("[1h:]") takes the global evaluation
		// interval, as a Prometheus server does (its default is 1m);
		// without this function the engine dereferences nil.
		NoStepSubqueryIntervalFn: func(int64) int64 { return defaultSubqueryStep.Milliseconds() },
	})
	return e, nil
}

// defaultSubqueryStep is Prometheus's default global evaluation interval.
const defaultSubqueryStep = time.Minute

// tsdbOptions accepts backfill. The demo and the scrape-less ingest paths
// write simulated samples at simulated timestamps, often a week in the past
// and one series after another. A default TSDB only accepts samples newer
// than the head's max time minus one hour, so:
//   - OutOfOrderTimeWindow is the whole retention: any sample that would
//     not be deleted at once is accepted, in any order; out-of-order samples
//     go through the WBL and are compacted into overlapping blocks, which
//     EnableOverlappingCompaction (on by default) merges.
//   - MinBlockDuration stays at 2h, so in-order backfill is cut into blocks
//     as it arrives and memory stays bounded during a week-long load.
//   - MaxBlockDuration is a tenth of retention (as in Prometheus), so
//     retention frees space in steps rather than all at once.
func tsdbOptions(retention time.Duration) *tsdb.Options {
	opts := tsdb.DefaultOptions()
	opts.RetentionDuration = retention.Milliseconds()
	opts.OutOfOrderTimeWindow = retention.Milliseconds()
	maxBlock := min(retention/10, maxBlockDuration)
	opts.MaxBlockDuration = max(maxBlock.Milliseconds(), opts.MinBlockDuration)
	return opts
}

// Describe implements Source.
func (e *Embedded) Describe() string { return "embedded TSDB at " + e.dir }

// Retention is the effective retention.
func (e *Embedded) Retention() time.Duration { return e.retention }

// Query implements Source.
func (e *Embedded) Query(ctx context.Context, q string, ts time.Time) (model.Vector, error) {
	qry, err := e.engine.NewInstantQuery(ctx, e.queryable, nil, q, ts)
	if err != nil {
		return nil, fmt.Errorf("%s: query failed: %w", e.Describe(), err)
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if len(res.Warnings) > 0 {
		e.logger.Warn("PromQL warnings", "source", e.Describe(), "query", q, "warnings", res.Warnings.AsErrors())
	}
	if res.Err != nil {
		return nil, fmt.Errorf("%s: query failed: %w", e.Describe(), res.Err)
	}
	vec, err := promqlToVector(res.Value)
	if err != nil {
		return nil, fmt.Errorf("%s: query %q: %w", e.Describe(), q, err)
	}
	return vec, nil
}

func promqlToVector(v any) (model.Vector, error) {
	switch r := v.(type) {
	case promql.Vector:
		out := make(model.Vector, 0, len(r))
		for _, s := range r {
			if s.H != nil {
				return nil, errors.New("native histogram results are not supported")
			}
			m := make(model.Metric, s.Metric.Len())
			s.Metric.Range(func(l labels.Label) { m[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
			out = append(out, &model.Sample{Metric: m, Value: model.SampleValue(s.F), Timestamp: model.Time(s.T)})
		}
		return out, nil
	case promql.Scalar:
		return model.Vector{{Metric: model.Metric{}, Value: model.SampleValue(r.V), Timestamp: model.Time(r.T)}}, nil
	default:
		return nil, fmt.Errorf("unexpected result type %T, want vector or scalar", v)
	}
}

// MetricNames implements Source.
func (e *Embedded) MetricNames(ctx context.Context, start, end time.Time) ([]string, error) {
	q, err := e.queryable.Querier(start.UnixMilli(), end.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("%s: listing metric names: %w", e.Describe(), err)
	}
	defer q.Close()
	names, _, err := q.LabelValues(ctx, model.MetricNameLabel, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: listing metric names: %w", e.Describe(), err)
	}
	// A block's label values point into its mmapped index, which a
	// read-only source unmaps at Close; the names outlive the querier.
	for i, n := range names {
		names[i] = strings.Clone(n)
	}
	return names, nil
}

// Appender returns a transaction for writing samples; Commit makes them
// visible to queries and durable in the WAL. In read-only mode every append
// fails with ErrReadOnly.
func (e *Embedded) Appender(ctx context.Context) storage.Appender {
	if e.db == nil {
		return readOnlyAppender{}
	}
	return e.db.Appender(ctx)
}

// Compact persists the in-memory head as blocks where it is due and applies
// retention, after a bulk load: the TSDB does not compact on its own
// (noAutoCompaction).
func (e *Embedded) Compact(ctx context.Context) error {
	if e.db == nil {
		return ErrReadOnly
	}
	if err := e.db.Compact(ctx); err != nil {
		return fmt.Errorf("%s: compacting: %w", e.Describe(), err)
	}
	return nil
}

// PersistHead writes the whole head, in-order and out-of-order samples,
// into blocks, closes the TSDB, deletes its write-ahead logs and head
// chunks, whose every sample is now in a block, and reopens it. A TSDB
// being written to keeps its last hours in the head and the WAL, and the
// WAL's newest segment is never truncated while it is open; a directory
// that is only read afterwards (the demo's) then opens without a log to
// replay.
func (e *Embedded) PersistHead(ctx context.Context) error {
	if e.ro != nil || e.db == nil {
		return ErrReadOnly
	}
	if err := e.db.CompactOOOHead(ctx); err != nil {
		return fmt.Errorf("%s: persisting the out-of-order head: %w", e.Describe(), err)
	}
	head := e.db.Head()
	if mint, maxt := head.MinTime(), head.MaxTime(); mint <= maxt {
		if err := e.db.CompactHead(tsdb.NewRangeHead(head, mint, maxt)); err != nil {
			return fmt.Errorf("%s: persisting the head: %w", e.Describe(), err)
		}
	}
	// The out-of-order head is written one block per 2h range, over the
	// blocks already there; a query would merge them all. Compaction
	// merges the overlaps and the small blocks, as the TSDB's own loop
	// would have done later.
	if err := e.db.Compact(ctx); err != nil {
		return fmt.Errorf("%s: compacting: %w", e.Describe(), err)
	}
	if err := e.db.Close(); err != nil {
		return fmt.Errorf("%s: closing: %w", e.Describe(), err)
	}
	e.db, e.queryable = nil, nil
	for _, name := range headFiles {
		if err := os.RemoveAll(filepath.Join(e.dir, name)); err != nil {
			return fmt.Errorf("%s: %w", e.Describe(), err)
		}
	}
	db, err := tsdb.Open(e.dir, e.logger, nil, tsdbOptions(e.retention), nil)
	if err != nil {
		return fmt.Errorf("%s: reopening: %w", e.Describe(), err)
	}
	noAutoCompaction(db)
	e.db, e.queryable = db, db
	return nil
}

// noAutoCompaction stops the TSDB's background compaction: a writable
// embedded TSDB is bulk-loaded (the demo, the emulator, backfills), and
// tsdb's background compaction of the out-of-order head while appenders
// write out-of-order chunks races on the head chunk files ("expected newly
// cut file to have sequence:offset 1:8, got 2:8", seen once in CI in the
// dashboards' data test; prometheus/prometheus #10769 and #11618 report
// the same panic). Compact and PersistHead compact when the load is done.
func noAutoCompaction(db *tsdb.DB) { db.DisableCompactions() }

// Close closes the TSDB. Committed samples are in the WAL, so reopening the
// directory sees them even if they were never compacted into a block.
func (e *Embedded) Close() error {
	if e.ro != nil {
		// The head's sandbox is deleted once, however often Close is
		// called.
		e.roClose.Do(func() { e.roErr = e.ro.Close() })
		if e.roErr != nil {
			return fmt.Errorf("%s: closing: %w", e.Describe(), e.roErr)
		}
		return nil
	}
	if e.db == nil {
		return nil // PersistHead failed to reopen it
	}
	if err := e.db.Close(); err != nil {
		return fmt.Errorf("%s: closing: %w", e.Describe(), err)
	}
	return nil
}

// ErrReadOnly is returned when writing to a source opened read-only.
var ErrReadOnly = errors.New("embedded TSDB is read-only")

// Querier reads raw samples in [mint, maxt] (milliseconds), for exports.
func (e *Embedded) Querier(mint, maxt int64) (storage.Querier, error) {
	return e.queryable.Querier(mint, maxt)
}
