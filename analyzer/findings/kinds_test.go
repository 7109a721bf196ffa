package findings

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/vocab"
)

// TestKindsListsEveryKind: every Kind constant this package declares
// (HAMi's) and criteria's (vocab's) is in Kinds, so that recommend's
// -l kind=... does not refuse a kind a finding has.
func TestKindsListsEveryKind(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []vocab.Kind
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		{
			ast.Inspect(f, func(n ast.Node) bool {
				vs, ok := n.(*ast.ValueSpec)
				if !ok {
					return true
				}
				for i, id := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && strings.HasPrefix(id.Name, "Kind") {
						k, _ := strconv.Unquote(lit.Value)
						kinds = append(kinds, vocab.Kind(k))
					}
				}
				return true
			})
		}
	}
	if len(kinds) < 5 {
		t.Fatalf("found only %q: the parse missed HAMi's constants", kinds)
	}
	kinds = append(kinds, vocab.KindIdleAllocation, vocab.KindInsufficientData, vocab.KindWorkloadXID)
	for _, k := range kinds {
		if !slices.Contains(Kinds(), k) {
			t.Errorf("kind %q is not in Kinds()", k)
		}
	}
}
