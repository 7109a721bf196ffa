package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryPackageIsOnTheMap: docs/ARCHITECTURE.md is where a newcomer
// looks a directory up, so every package of the module is named there by
// its path (`analyzer/report/send`, or `deploy/` for a directory of
// tests), not only through a parent's name. Nested modules (tools/...)
// have their own go.mod and are not this module's.
func TestEveryPackageIsOnTheMap(t *testing.T) {
	root := ".."
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "bin") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
			return filepath.SkipDir
		}
		goFiles, _ := filepath.Glob(filepath.Join(path, "*.go"))
		if len(goFiles) == 0 || path == root {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		// The path as a whole: not a prefix of a longer one, nor the tail
		// of one (report/send inside analyzer/report/send is not it).
		named := regexp.MustCompile(`(^|[^\w/.-])` + regexp.QuoteMeta(rel) + `/?([^\w/-]|$)`)
		if !named.Match(doc) {
			missing = append(missing, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range missing {
		t.Errorf("docs/ARCHITECTURE.md does not name %s: say what it holds in the table of its part", p)
	}
}
