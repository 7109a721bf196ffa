package vocab

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestAlertsAreOneList: names are unique, prefixed, cased one way, and a
// kind is sent under one name.
func TestAlertsAreOneList(t *testing.T) {
	names, kinds := map[AlertName]bool{}, map[Kind]AlertName{}
	// A word of an initialism written as a word (Gpu, Mig, Oom, Xid, Ecc)
	// is the old serve casing.
	mixed := regexp.MustCompile(`Gpu|Mig[A-Z]|Oom|Xid|Ecc`)
	for _, a := range Alerts {
		if names[a.Name] {
			t.Errorf("%s is listed twice", a.Name)
		}
		names[a.Name] = true
		if !strings.HasPrefix(string(a.Name), AlertPrefix) || len(a.Name) == len(AlertPrefix) {
			t.Errorf("%s does not start with %s and a name", a.Name, AlertPrefix)
		}
		if mixed.MatchString(string(a.Name)) {
			t.Errorf("%s: initialisms are upper case (GPU, MIG, OOM, XID, ECC)", a.Name)
		}
		if a.Rules == 0 && a.Kind == "" {
			t.Errorf("%s: neither a rule file nor serve sends it", a.Name)
		}
		if a.Kind != "" {
			if other, ok := kinds[a.Kind]; ok {
				t.Errorf("kind %s is sent as %s and %s", a.Kind, other, a.Name)
			}
			kinds[a.Kind] = a.Name
		}
	}
}

// TestAlertConstantsAreWrittenOut: each Alert constant of alerts.go is a
// string literal (so that a grep for the alert finds its definition), is
// the prefix and the constant's name without "Alert" (so that a grep for
// either finds both), and is listed in Alerts (so that the rule files'
// and serve's tests check it).
func TestAlertConstantsAreWrittenOut(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "alerts.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[AlertName]bool{}
	for _, a := range Alerts {
		listed[a.Name] = true
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || vs.Type == nil || typeName(vs.Type) != "AlertName" {
			return true
		}
		for i, id := range vs.Names {
			n++
			lit, ok := vs.Values[i].(*ast.BasicLit)
			if !ok {
				t.Errorf("%s is not written out as a string literal", id.Name)
				continue
			}
			name, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			if want := AlertPrefix + strings.TrimPrefix(id.Name, "Alert"); name != want {
				t.Errorf("%s = %q, want %q (the prefix and the constant's name)", id.Name, name, want)
			}
			if !listed[AlertName(name)] {
				t.Errorf("%s (%s) is not in Alerts", id.Name, name)
			}
		}
		return true
	})
	if n != len(Alerts) {
		t.Errorf("alerts.go has %d AlertName constants, Alerts lists %d", n, len(Alerts))
	}
}

// typeName is a type expression's identifier, "" for any other.
func typeName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestEveryKindHasAnAlert: each Kind constant of kinds.go is some alert's
// kind, so a new kind cannot reach serve without a name.
func TestEveryKindHasAnAlert(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "kinds.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, id := range vs.Names {
			if !strings.HasPrefix(id.Name, "Kind") {
				continue
			}
			n++
			s, err := strconv.Unquote(vs.Values[i].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			kind := Kind(s)
			if a, ok := AlertOf(kind); !ok || a.Kind != kind {
				t.Errorf("%s (%s) has no alert in Alerts", id.Name, kind)
			}
			if !slices.Contains(Kinds(), kind) {
				t.Errorf("%s (%s) is not in Kinds(), which recommend -l kind=... checks against", id.Name, kind)
			}
		}
		return true
	})
	if n == 0 {
		t.Fatal("no Kind constants found in kinds.go")
	}
	if _, ok := AlertOf(""); ok {
		t.Error(`AlertOf("") found an alert`)
	}
}

func TestRunbookURL(t *testing.T) {
	got := Alert{Name: AlertTimesliceOOMRisk}.RunbookURL()
	if want := RunbookBase + "#gpulenstimesliceoomrisk"; got != want {
		t.Errorf("RunbookURL = %q, want %q", got, want)
	}
}

// TestIsALeaf: the exporter, the generators and the analysis all import
// vocab; anything beyond the standard library would be linked into each.
func TestIsALeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/gpulens/gpulens/vocab" {
			t.Errorf("vocab links %s: it must need the standard library only", p)
		}
	}
}
