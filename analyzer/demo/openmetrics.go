package demo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/internal/openmetrics"
)

// exportOpenMetrics writes the window's gpulens series to path, atomically:
// a failed export leaves no half-written file behind.
func exportOpenMetrics(ctx context.Context, db *source.Embedded, path string, start, end time.Time) error {
	q, err := db.Querier(start.UnixMilli(), end.UnixMilli())
	if err != nil {
		return err
	}
	defer q.Close()
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("--export-openmetrics: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := openmetrics.Write(ctx, tmp, q, "gpulens_.+"); err != nil {
		tmp.Close()
		return fmt.Errorf("--export-openmetrics: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("--export-openmetrics: writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("--export-openmetrics: %w", err)
	}
	return nil
}
