package source

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
