// Package docs_test checks that what the documentation names exists: a
// document that names a file, a package or an identifier that is gone
// sends its reader looking for nothing, and a long document drifts a
// claim at a time (issue 55: 8 of 14 claims of ARCHITECTURE.md checked
// were false). It reads the tree with go/parser only, so it is fast and
// builds nothing.
package docs_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// documents are the Markdown files checked, relative to the repository.
var documents = []string{"README.md", "docs/*.md", "dashboards/README.md", "alerts/README.md"}

const module = "github.com/gpulens/gpulens/"

var (
	// span is Markdown's inline code: `...` on one line.
	span = regexp.MustCompile("`([^`\n]+)`")
	// pathLike is a repository path: at least one slash, no spaces; a
	// glob's * and a Go pattern's /... allowed.
	pathLike = regexp.MustCompile(`^\.?/?[A-Za-z0-9_.-]+(/[A-Za-z0-9_.*{},-]+)+/?$`)
	// qualified is a Go identifier named through its package:
	// pkg.Name, pkg.Type.Method or pkg.Type.Field, with a pointer, a
	// slice or a call around it.
	qualified = regexp.MustCompile(`^[*&\[\]]*([a-z][a-z0-9]*)\.([A-Za-z][A-Za-z0-9]*)(?:\.([A-Za-z][A-Za-z0-9]*))?(?:\(.*\)|\{.*\}|\[.*\])?$`)
	// testName is a test, benchmark or fuzz target named alone.
	testName = regexp.MustCompile(`^(Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*$`)
	// testFunc finds those in a _test.go file.
	testFunc = regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*)\(`)
)

// TestNamesExist reads every backquoted span of the documents: a path
// whose first element is one of the repository's top-level files or
// directories must exist (a glob must match); pkg.Name, where pkg is the
// name of a package of this module, must be declared in one package of
// that name (Name.Member as a field, method or interface method of the
// type Name); a test named alone must be a func of some _test.go file.
func TestNamesExist(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tr := newTree(t, root)
	var files []string
	for _, g := range documents {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	checked := 0
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		tr.docDir = filepath.Dir(f)
		for _, r := range spans(t, f) {
			if why := tr.check(r.text); why != "" {
				t.Errorf("%s:%d: `%s`: %s", rel, r.line, r.text, why)
			}
			checked++
		}
	}
	t.Logf("%d spans of %d documents", checked, len(files))
}

type ref struct {
	line int
	text string
}

// spans are the inline code spans of a Markdown file, outside fenced
// blocks (whose text is a command or a diagram, not one name).
func spans(t *testing.T, path string) []ref {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []ref
	fenced := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			out = append(out, ref{n, strings.TrimSpace(m[1])})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tree is what the spans are checked against.
type tree struct {
	root string
	top  map[string]bool     // top-level names
	pkgs map[string][]string // package name → directories
	test map[string]bool     // Test*, Benchmark* and Fuzz* funcs
	// docDir is the directory of the document being read: a README
	// names its own directory's files from there.
	docDir string

	mu    sync.Mutex
	decls map[string]*decls // directory → its declarations
}

func newTree(t *testing.T, root string) *tree {
	tr := &tree{root: root, top: map[string]bool{}, pkgs: map[string][]string{}, test: map[string]bool{}, decls: map[string]*decls{}}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		tr.top[e.Name()] = true
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir := filepath.Dir(path)
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range testFunc.FindAllSubmatch(b, -1) {
				tr.test[string(m[1])] = true
			}
			return nil
		}
		if seen[dir] {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
		if err != nil {
			return err
		}
		seen[dir] = true
		if n := f.Name.Name; n != "main" {
			tr.pkgs[n] = append(tr.pkgs[n], dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// check says what is wrong with the span s, "" when nothing is or when
// it names nothing of this repository.
func (tr *tree) check(s string) string {
	s = strings.TrimSuffix(s, ",")
	switch {
	case testName.MatchString(s):
		if !tr.test[s] {
			return "no test, benchmark or fuzz target of this name"
		}
		return ""
	case strings.HasPrefix(s, module):
		s = strings.TrimPrefix(s, module)
		if m := pathIdent.FindStringSubmatch(s); m != nil {
			return tr.checkPathIdent(m[1], m[2], m[3])
		}
		return tr.checkPath(s)
	case pathIdent.MatchString(s):
		m := pathIdent.FindStringSubmatch(s)
		return tr.checkPathIdent(m[1], m[2], m[3])
	case pathLike.MatchString(s):
		return tr.checkPath(s)
	}
	if m := qualified.FindStringSubmatch(s); m != nil && !notGo(m[2], m[3]) {
		return tr.checkIdent(m[1], m[2], m[3])
	}
	return ""
}

// fileExt are the extensions of a file named alone (signals.go): not a
// package's name, and a file the reader finds beside the text's path.
var fileExt = map[string]bool{"go": true, "md": true, "yaml": true, "yml": true, "json": true, "txt": true, "sh": true, "prom": true}

// notGo: name.member is no Go identifier: a file's extension, or two
// lower-case words, which are a domain (gpu.nvidia.com) or a YAML key
// (recommend.max_replicas), not a package's unexported type's member.
func notGo(name, member string) bool {
	lower := func(s string) bool { return s != "" && strings.ToLower(s) == s }
	return member == "" && fileExt[name] || lower(name) && lower(member)
}

// pathIdent is an identifier named through its package's directory:
// analyzer/source.Detect, exporter/sim/fleet.Sink.Append.
var pathIdent = regexp.MustCompile(`^([a-z0-9_-]+(?:/[a-z0-9_-]+)+)\.([A-Z][A-Za-z0-9]*)(?:\.([A-Za-z][A-Za-z0-9]*))?(?:\(.*\))?$`)

func (tr *tree) checkPathIdent(dir, name, member string) string {
	if fileExt[name] && member == "" {
		return tr.checkPath(dir + "." + name)
	}
	first, _, _ := strings.Cut(dir, "/")
	if !tr.top[first] {
		return ""
	}
	if why := tr.checkPath(dir); why != "" {
		return why
	}
	return tr.identIn([]string{filepath.Join(tr.root, dir)}, dir, name, member)
}

// pathSuffix is what may follow a path: a line (file.go:12) or a Go
// package pattern's /... .
var pathSuffix = regexp.MustCompile(`(:\d+(-\d+)?|/\.\.\.)$`)

func (tr *tree) checkPath(p string) string {
	p = strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/")
	p = pathSuffix.ReplaceAllString(p, "")
	first, _, _ := strings.Cut(p, "/")
	if !tr.top[first] {
		return "" // another repository's path, or one built at run time
	}
	dirs := []string{tr.root}
	if tr.docDir != "" && tr.docDir != tr.root {
		dirs = append(dirs, tr.docDir)
	}
	if strings.ContainsAny(p, "*{") {
		g := strings.NewReplacer("{", "", "}", "").Replace(p)
		for _, dir := range dirs {
			if m, err := filepath.Glob(filepath.Join(dir, g)); err == nil && len(m) > 0 {
				return ""
			}
		}
		return "no file matches"
	}
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return ""
		}
	}
	if first == "testdata" {
		// A package's own testdata (its fuzz corpus, its goldens), named
		// from the package's directory.
		for _, dirs := range tr.pkgs {
			for _, d := range dirs {
				if _, err := os.Stat(filepath.Join(d, p)); err == nil {
					return ""
				}
			}
		}
	}
	return "no such file or directory"
}

func (tr *tree) checkIdent(pkg, name, member string) string {
	dirs, ok := tr.pkgs[pkg]
	if !ok {
		return "" // not a package of this module: the standard library's or a dependency's
	}
	return tr.identIn(dirs, pkg, name, member)
}

// identIn finds name (and its member) in one of the packages of dirs.
func (tr *tree) identIn(dirs []string, pkg, name, member string) string {
	var notMember string
	for _, dir := range dirs {
		d := tr.declsOf(dir)
		if !d.top[name] {
			continue
		}
		if member == "" || d.members[name] == nil && !d.types[name] {
			return "" // a function, variable or constant: no member to check
		}
		if !d.types[name] || d.members[name][member] {
			return ""
		}
		notMember = "package " + pkg + "'s type " + name + " has no field or method " + member
	}
	if notMember != "" {
		return notMember
	}
	return "package " + pkg + " (" + strings.Join(relAll(tr.root, dirs), ", ") + ") declares no " + name
}

func relAll(root string, dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i], _ = filepath.Rel(root, d)
	}
	return out
}

// decls are one package's top-level names, its types, and each type's
// fields and methods, from every Go file of the directory, tests
// included (a document may name a test's helper).
type decls struct {
	top     map[string]bool
	types   map[string]bool
	members map[string]map[string]bool
}

func (tr *tree) declsOf(dir string) *decls {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if d, ok := tr.decls[dir]; ok {
		return d
	}
	d := &decls{top: map[string]bool{}, types: map[string]bool{}, members: map[string]map[string]bool{}}
	tr.decls[dir] = d
	member := func(typ, name string) {
		if d.members[typ] == nil {
			d.members[typ] = map[string]bool{}
		}
		d.members[typ][name] = true
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, path := range files {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			continue // a file that does not parse fails its own package's build
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					d.top[decl.Name.Name] = true
					continue
				}
				member(receiverType(decl.Recv.List[0].Type), decl.Name.Name)
			case *ast.GenDecl:
				for _, s := range decl.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							d.top[n.Name] = true
						}
					case *ast.TypeSpec:
						d.top[s.Name.Name], d.types[s.Name.Name] = true, true
						for _, n := range fieldNames(s.Type) {
							member(s.Name.Name, n)
						}
					}
				}
			}
		}
	}
	return d
}

// receiverType is the type name of a method's receiver: T of T, *T, T[K].
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// fieldNames are a struct's fields (an embedded one by its type's name)
// or an interface's methods.
func fieldNames(e ast.Expr) []string {
	var list *ast.FieldList
	switch x := e.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list = x.Methods
	default:
		return nil
	}
	var out []string
	for _, f := range list.List {
		for _, n := range f.Names {
			out = append(out, n.Name)
		}
		if len(f.Names) == 0 {
			t := f.Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			switch t := t.(type) {
			case *ast.Ident:
				out = append(out, t.Name)
			case *ast.SelectorExpr:
				out = append(out, t.Sel.Name)
			}
		}
	}
	return out
}

// TestCheck: the checker tells what exists from what does not, on names
// of this tree chosen by hand, and leaves alone what is not this tree's.
func TestCheck(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tr := newTree(t, root)
	for _, tc := range []struct {
		span string
		ok   bool
	}{
		{"analyzer/fleet/result.go", true},
		{"analyzer/fleet/nothing.go", false},
		{"cmd/gpulens/help/*.txt", true},
		{"cmd/gpulens/help/*.html", false},
		{"./analyzer/...", true},
		{"github.com/gpulens/gpulens/analyzer/session", true},
		{"testdata/fuzz/FuzzOverridePrices", true}, // analyzer/recommend's
		{"fleet.Result", true},
		{"fleet.Result.Allocations", true},  // a field
		{"fleet.Result.NoSuchField", false}, // neither field nor method
		{"fleet.AllocationKey.Namespace", true},
		{"session.Session.Report", true}, // a method
		{"session.Report", false},        // the method named as a function
		{"*session.FlagError", true},
		{"report.Build()", true},
		{"vocab.DefaultClusterLabel", true}, // a constant
		{"analyzer/source.Detect", true},    // through its directory
		{"analyzer/source.NoSuch", false},
		{"TestNamesExist", true},
		{"TestNoSuchTest", false},
		{"model.ParseDuration", true},            // not this module's package
		{"gpu.nvidia.com", true},                 // a domain
		{"kubernetes/kubernetes/pkg/x.go", true}, // another repository's
	} {
		if why := tr.check(tc.span); (why == "") != tc.ok {
			t.Errorf("check(%q) = %q; want ok=%v", tc.span, why, tc.ok)
		}
	}
}

// maxArchitecture bounds docs/ARCHITECTURE.md: a map read in a quarter
// of an hour, not a history. It had grown a section per issue to 174 KB,
// and said what was no longer so (issue 55); detail belongs in the
// package's doc.go, history in the commit log.
const maxArchitecture = 25 << 10

func TestArchitectureIsAMap(t *testing.T) {
	fi, err := os.Stat("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > maxArchitecture {
		t.Errorf("docs/ARCHITECTURE.md is %d bytes, over %d: move detail into the package's doc.go and history into the commit message", fi.Size(), maxArchitecture)
	}
}
