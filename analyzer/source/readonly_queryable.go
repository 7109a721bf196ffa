package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

// readOnlyQueryable serves queries over a directory it must not write to,
// such as a copy of a Prometheus data directory: opening it read-write
// would replay and truncate its WAL, compact it and apply retention.
//
// It is opened once per command and shared by every query, two at a time:
//   - the directory's blocks are opened in place through tsdb.DBReadOnly.
//     Blocks are immutable and a *tsdb.Block serves concurrent queriers,
//     as in a running Prometheus.
//   - the head (WAL, out-of-order WBL and m-mapped head chunks) is replayed
//     once into a private TSDB in a sandbox outside the directory. Its
//     files are hard links to (or, across file systems, copies of) the
//     directory's: replay only reads them, and everything tsdb writes
//     (a new WAL segment, new head chunk files, the lock) is a new file
//     of the sandbox, never a write through a link.
//
// tsdb.DBReadOnly alone cannot do this: it replays the head on every
// Querier call, its second call fails ("file exists": the head chunks are
// hard-linked into the same sandbox again), and its querier may not be
// used from two goroutines. A tsdb.DB's Querier may.
type readOnlyQueryable struct {
	dir     string
	ro      *tsdb.DBReadOnly
	blocks  []*tsdb.Block
	head    *tsdb.DB // nil when the directory has no WAL
	sandbox string
	// mu keeps the blocks mapped while dropPages gives their pages back.
	mu     sync.Mutex
	closed bool
}

// dropPages gives back the process's resident pages of the blocks'
// files (dropMappedPages); the blocks stay open and readable.
func (q *readOnlyQueryable) dropPages() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	dirs := make([]string, 0, len(q.blocks))
	for _, b := range q.blocks {
		// The process's mappings name files by their absolute paths,
		// links resolved: --data-dir may be neither.
		d, err := filepath.Abs(b.Dir())
		if err == nil {
			d, err = filepath.EvalSymlinks(d)
		}
		if err == nil {
			dirs = append(dirs, d)
		}
	}
	dropMappedPages(dirs)
}

// headFiles are the entries of a TSDB directory that make up its head.
var headFiles = []string{"wal", "wbl", "chunks_head"}

func openReadOnly(dir string, logger *slog.Logger) (q *readOnlyQueryable, err error) {
	q = &readOnlyQueryable{dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("embedded TSDB at %s: %w", dir, err), q.Close())
			q = nil
		}
	}()
	// DBReadOnly's own sandbox goes to the temporary directory too: it
	// must not be inside the directory we promised not to write to.
	if q.ro, err = tsdb.OpenDBReadOnly(dir, os.TempDir(), logger); err != nil {
		return q, err
	}
	readers, err := q.ro.Blocks()
	if err != nil {
		return q, err
	}
	for _, r := range readers {
		b, ok := r.(*tsdb.Block)
		if !ok {
			return q, fmt.Errorf("block %T is not a *tsdb.Block", r)
		}
		q.blocks = append(q.blocks, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "wal")); errors.Is(err, fs.ErrNotExist) {
		return q, nil
	}
	if q.sandbox, err = os.MkdirTemp("", "gpulens-head-"); err != nil {
		return q, err
	}
	for _, name := range headFiles {
		if err := linkTree(filepath.Join(dir, name), filepath.Join(q.sandbox, name)); err != nil {
			return q, fmt.Errorf("preparing the head's sandbox: %w", err)
		}
	}
	opts := tsdb.DefaultOptions()
	// Nothing is appended, so nothing is cut into blocks, and nothing is
	// deleted for age: the analysis decides the window.
	opts.RetentionDuration = 0
	opts.OutOfOrderTimeWindow = DefaultRetention.Milliseconds()
	db, err := tsdb.Open(q.sandbox, logger, nil, opts, nil)
	if err != nil {
		return q, fmt.Errorf("replaying the head: %w", err)
	}
	// The sandbox holds only the head, which compaction would cut into
	// blocks at a CPU cost for nothing; the first compaction comes a
	// minute after Open, so this is in time.
	db.DisableCompactions()
	q.head = db
	return q, nil
}

// Querier merges the blocks and the head, as tsdb.DB.Querier does; samples
// present in both (the WAL overlaps the newest block) are deduplicated by
// the chained merge.
func (q *readOnlyQueryable) Querier(mint, maxt int64) (_ storage.Querier, err error) {
	queriers := make([]storage.Querier, 0, len(q.blocks)+1)
	defer func() {
		if err != nil {
			for _, qr := range queriers {
				err = errors.Join(err, qr.Close())
			}
		}
	}()
	for _, b := range q.blocks {
		if !b.OverlapsClosedInterval(mint, maxt) {
			continue
		}
		qr, err := tsdb.NewBlockQuerier(b, mint, maxt)
		if err != nil {
			return nil, fmt.Errorf("embedded TSDB at %s: block %s: %w", q.dir, b.Meta().ULID, err)
		}
		queriers = append(queriers, qr)
	}
	if q.head != nil {
		qr, err := q.head.Querier(mint, maxt)
		if err != nil {
			return nil, fmt.Errorf("embedded TSDB at %s: head: %w", q.dir, err)
		}
		queriers = append(queriers, qr)
	}
	return storage.NewMergeQuerier(queriers, nil, storage.ChainedSeriesMerge), nil
}

// Close releases the blocks and the head and deletes the sandboxes.
func (q *readOnlyQueryable) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	var errs []error
	if q.head != nil {
		errs = append(errs, q.head.Close())
	}
	if q.sandbox != "" {
		errs = append(errs, os.RemoveAll(q.sandbox))
	}
	if q.ro != nil {
		// DBReadOnly closes the blocks it opened.
		errs = append(errs, q.ro.Close())
	}
	return errors.Join(errs...)
}

// linkTree recreates src (a directory of files, one level of
// subdirectories for WAL checkpoints) at dst, hard-linking each file, or
// copying it where src and dst are on different file systems. A missing
// src is not an error: a TSDB need not have a WBL.
func linkTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && path == src {
			return nil
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o750)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if err := os.Link(path, target); err == nil {
			return nil
		}
		return copyFile(path, target)
	})
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	_, err = io.Copy(out, in)
	return err
}
