package source

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/prometheus/tsdb"
)

// tsdbMarkers are entries only a Prometheus TSDB directory has at its top
// level (besides block directories, which hold a meta.json).
var tsdbMarkers = map[string]bool{"wal": true, "chunks_head": true, "wbl": true, "lock": true}

// checkTSDBDir refuses a directory that holds something else, so a mistyped
// --data-dir never turns a home directory into a TSDB (and never has its
// files mistaken for blocks and deleted by retention). A missing or empty
// directory is created when writable.
func checkTSDBDir(dir string, readOnly bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if readOnly {
			return fmt.Errorf("embedded TSDB at %s: directory does not exist", dir)
		}
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("embedded TSDB at %s: %w", dir, err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("embedded TSDB at %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	var other []string
	for _, ent := range entries {
		if tsdbMarkers[ent.Name()] {
			return nil
		}
		if ent.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, ent.Name(), "meta.json")); err == nil {
				return nil
			}
		}
		if len(other) < 5 {
			other = append(other, ent.Name())
		}
	}
	return fmt.Errorf("embedded TSDB at %s: directory is not empty and is not a Prometheus TSDB (no wal/ nor blocks; found %s); use an empty or new directory",
		dir, strings.Join(other, ", "))
}

// checkBlockMetas reads every block's meta.json. Prometheus's tsdb skips a
// block whose meta.json it cannot read, with a log line the analyzer does
// not show, and the analysis then reported "no GPU series" about a store
// that has them: a block that cannot be read is named here instead.
func checkBlockMetas(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("embedded TSDB at %s: %w", dir, err)
	}
	for _, ent := range entries {
		if !ent.IsDir() {
			continue
		}
		if _, err := ulid.ParseStrict(ent.Name()); err != nil {
			continue // not a block: wal/, chunks_head/, a .tmp directory
		}
		path := filepath.Join(dir, ent.Name(), "meta.json")
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("embedded TSDB at %s: block %s cannot be read: %w", dir, ent.Name(), err)
		}
		var m tsdb.BlockMeta
		if err := json.Unmarshal(b, &m); err != nil {
			// The JSON decoder's message names no file content beyond a
			// character, so it is safe to quote.
			return fmt.Errorf("embedded TSDB at %s: block %s is corrupt: %s is not a block's meta.json: %w", dir, ent.Name(), path, err)
		}
		if m.Version != 1 {
			return fmt.Errorf("embedded TSDB at %s: block %s is corrupt: %s has version %d, want 1", dir, ent.Name(), path, m.Version)
		}
		if m.ULID.String() != ent.Name() {
			return fmt.Errorf("embedded TSDB at %s: block %s is corrupt: %s names block %s", dir, ent.Name(), path, m.ULID)
		}
	}
	return nil
}
