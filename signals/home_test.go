package signals_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// promqlTokens are what PromQL looks like inside a Go string literal: the
// forms signals/ writes (aggregations by labels, window functions, joins,
// range selectors and subqueries).
var promqlTokens = regexp.MustCompile(`_over_time\(|label_replace\(|count_values|predict_linear\(|` +
	`\b(sum|avg|max|min|count|group|topk|bottomk|quantile|stddev) (by|without)\b|\b(sum|avg|max|min|count|group)\(|` +
	`(\b(and|or|unless|bool)|[-+*/^<>=]) (on|ignoring) \(|group_(left|right)|\[(\d+(ms|[smhdwy])|\$__\w+)(:\d*(ms|[smhdwy])?)?\]|` +
	// A window function passed by name (signals.Fn is its type), the
	// evaluation's instant, and a filter by comparison written as a
	// string ("x > 0", "%s < %v"): issue 55 found 61 of them outside.
	`^(\w+_over_time|changes|increase|rate|deriv|predict_linear)$|\btime\(\)|^\)? ?(>|<|==|!=|>=|<=) \d|%s (>|<|==|!=|>=|<=) %|` +
	// "or vector(", Grafana's query functions, and a label matcher
	// written out ({l=~"v"}, or a format that is one: "%s=~%q").
	`\bor vector\(|\b(query_result|label_values)\(|\{\w+ ?(=~|!~|!=|=) ?"|^%s(=~|!~|!=|=)%q$`)

// promqlGlue is an arithmetic or set operator written as the glue of a
// concatenation, with the parentheses and numbers around it (" / ",
// ") - ", "0 * ", " / 3600", " * 0 + 1", " or "): an expression composed
// of strings around signals' forms. Only the separator of a
// strings.Join escapes it, where " or " joins words of a sentence.
var promqlGlue = regexp.MustCompile(`^[()]*(\d+(\.\d+)?)?( ([-+*/%^]|or|unless) [()]*(\d+(\.\d+)?)?[()]*)+$|^[()]*\d+(\.\d+)? [-+*/%^] [()]*$`)

// promqlElsewhere are the files outside signals/ allowed PromQL, each for
// the reason said: the readers of parsed PromQL, which name its functions.
var promqlElsewhere = map[string]string{
	"analyzer/scan/eval.go":   "the scan evaluates PromQL's functions by their names: it reads PromQL, it writes none",
	"analyzer/query/scope.go": "the sharder rewrites parsed PromQL and tells absent_over_time by its parsed name",
}

// TestNoPromQLOutsideSignals holds the promise of signals/doc.go: every
// PromQL form is written here, and the analysis, the rules and the
// dashboards compose them. It scans the string literals of every non-test
// Go file of the module outside signals/.
func TestNoPromQLOutsideSignals(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "signals" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		joinSep := map[ast.Node]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && isStringsJoin(call) {
				joinSep[call.Args[1]] = true
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			found := promqlTokens.FindString(s)
			if found == "" && !joinSep[lit] && promqlGlue.MatchString(s) {
				found = s
			}
			if found == "" {
				return true
			}
			if _, ok := promqlElsewhere[rel]; ok {
				seen[rel] = true
				return true
			}
			t.Errorf("%s: PromQL %q outside signals/: write the form in signals (signals/forms.go) and call it", fset.Position(lit.Pos()), found)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range promqlElsewhere {
		if !seen[rel] {
			t.Errorf("%s is allowed PromQL but has none: take it off promqlElsewhere", rel)
		}
	}
}

// isStringsJoin is a call strings.Join(elems, sep).
func isStringsJoin(call *ast.CallExpr) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Join" || len(call.Args) != 2 {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "strings"
}

// The scan's tokens catch what the module used to write outside signals/
// and pass prose.
func TestPromQLTokens(t *testing.T) {
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"avg_over_time((x)[1h:1m]) > 0.5", true},
		{"max by (node, uuid) (x)", true},
		{"max by ", true},
		{"count(x) or vector(0)", true},
		{"x and on (node, uuid) y", true},
		{"x * on (node) group_left () y", true},
		{"max_over_time(rec[5m])", true},
		{"(x)[$__range:1m]", true},
		{`label_replace(x, "a", "$1", "b", "(.*)")`, true},
		{"the node kube-state-metrics places each pod on (kube_pod_info).", false},
		{"Address to serve on (exporter-toolkit; repeatable)", false},
		{"gpu memory used p99", false},
		{"count_over_time", true},
		{"max_over_time", true},
		{"time() - x > 120", true},
		{" > 0", true},
		{") < 1", true},
		{"%s < %v", true},
		{"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", false},
		{"over time", false},
		// What issue 55's audit of the outputs found composed outside.
		{" / ", true},
		{" * ", true},
		{" - ", true},
		{" + ", true},
		{" or ", true},
		{"0 * ", true},
		{"(0 * ", true},
		{" + 1", true},
		{" / 60)", true},
		{") / ", true},
		{" * 0 + 1", true},
		{"query_result(", true},
		{`label_values(gpulens_finding, severity)`, true},
		{`{cluster=~"$cluster", kind="banked"}`, true},
		{`{mode="allocation-only"} == 1`, true},
		{"%s=~%q", true},
		{"used / allocated", false},
		{"   - ", false},
		{"-", false},
		{"/", false},
		{"1 to 2", false},
		{"%s has no series in the store with %s=%q", false},
		{"a or b", false},
	} {
		if got := promqlTokens.MatchString(c.s) || promqlGlue.MatchString(c.s); got != c.want {
			t.Errorf("%q: PromQL %v, want %v", c.s, got, c.want)
		}
	}
}
