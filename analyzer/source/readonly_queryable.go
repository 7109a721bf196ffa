package source

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

// readOnlyQueryable serves queries over a directory it must not write to,
// such as a copy of a Prometheus data directory: opening it read-write
// would replay and truncate its WAL, compact it and apply retention.
//
// tsdb.DBReadOnly loads the head into a sandbox on each Querier call and
// fails on the second ("file exists": the head chunks are hard-linked into
// the same sandbox again), so every querier gets its own DBReadOnly, and
// its own sandbox, closed with it. The head is replayed per query; that is
// the price of never touching the directory.
type readOnlyQueryable struct {
	dir    string
	logger *slog.Logger
}

func (q readOnlyQueryable) Querier(mint, maxt int64) (storage.Querier, error) {
	// The sandbox must not be inside the directory we promised not to
	// write to.
	ro, err := tsdb.OpenDBReadOnly(q.dir, os.TempDir(), q.logger)
	if err != nil {
		return nil, fmt.Errorf("embedded TSDB at %s: %w", q.dir, err)
	}
	inner, err := ro.Querier(mint, maxt)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("embedded TSDB at %s: %w", q.dir, err), ro.Close())
	}
	return &ownedQuerier{Querier: inner, ro: ro}, nil
}

// ownedQuerier closes its DBReadOnly (and deletes the sandbox) with it.
type ownedQuerier struct {
	storage.Querier
	ro *tsdb.DBReadOnly
}

func (q *ownedQuerier) Close() error {
	return errors.Join(q.Querier.Close(), q.ro.Close())
}

// checkReadOnly opens the directory once, so that a directory tsdb cannot
// read fails at open rather than at the first query.
func checkReadOnly(q readOnlyQueryable) error {
	querier, err := q.Querier(0, 1)
	if err != nil {
		return err
	}
	return querier.Close()
}
