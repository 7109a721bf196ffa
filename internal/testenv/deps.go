package testenv

import (
	"os/exec"
	"strings"
	"testing"
)

// ForbidDeps fails t for every package the package in dir links (go list
// -deps) that is one of forbidden or below one of them: a leaf that should
// stay a leaf, or a binary that should not carry a library.
func ForbidDeps(t *testing.T, dir string, forbidden ...string) {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps in %s: %v", dir, err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if pkg == f || strings.HasPrefix(pkg, f+"/") {
				t.Errorf("%s links %s", dir, pkg)
			}
		}
	}
}
