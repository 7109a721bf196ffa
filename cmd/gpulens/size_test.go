package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxCommandLines bounds this package's non-test Go. The CLI parses flags
// and hands them to analyzer/session, whose one preamble (reading.open:
// output flags, session, exit codes) every reading command shares; what
// grows past this is reasoning or rendering that belongs in analyzer/,
// where it is tested without a process and shared with serve (issue 55,
// item 6: the same run preamble had been written three times).
const maxCommandLines = 1000

// TestCommandSize counts lines as wc -l does: line feeds.
func TestCommandSize(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		total += bytes.Count(b, []byte("\n"))
	}
	if total > maxCommandLines {
		t.Errorf("cmd/gpulens's non-test Go is %d lines, over %d: move what is not flag parsing into analyzer/ (wc -l $(ls cmd/gpulens/*.go | grep -v _test))", total, maxCommandLines)
	}
	t.Logf("cmd/gpulens: %d non-test lines of %d", total, maxCommandLines)
}
