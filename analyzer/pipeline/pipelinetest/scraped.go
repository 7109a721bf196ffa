package pipelinetest

import (
	"context"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/source"
)

// Scraped is a /metrics text (a published excerpt, a fixture) scraped
// every step over [start, end] into a real embedded TSDB, closed after t:
// the store a test analyses as the CLI would.
func Scraped(t testing.TB, exposition []byte, start, end time.Time, step time.Duration) *source.Embedded {
	t.Helper()
	db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	app := db.Appender(context.Background())
	for ts := start; !ts.After(end); ts = ts.Add(step) {
		if _, err := source.AppendExposition(app, exposition, "", ts); err != nil {
			t.Fatal(err)
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	return db
}
