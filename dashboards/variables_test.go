package dashboards

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestVariablesDefined: every $variable a committed dashboard's queries
// name is one of its own variables or one Grafana defines. Grafana leaves
// an undefined variable as it is, so `pod=~"$pod"` on a dashboard without
// $pod matches no series and the panel is empty, with no error anywhere:
// the fleet overview and the team view named $pod (and the overview
// $namespace) that way until this test. The tests that evaluate the
// panels replace every variable, so only this one sees it.
func TestVariablesDefined(t *testing.T) {
	builtin := []string{"__range", "__range_s", "__range_ms", "__interval", "__interval_ms", "__rate_interval", "__from", "__to", "__dashboard", "__name"}
	ref := regexp.MustCompile(`\$\{?([A-Za-z_]\w*)`) // not label_replace's $1
	files, err := filepath.Glob("*/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed dashboards: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Panels     []panelJSON `json:"panels"`
			Templating struct {
				List []struct {
					Name  string `json:"name"`
					Query any    `json:"query"`
				} `json:"list"`
			} `json:"templating"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		defined := slices.Clone(builtin)
		var exprs []string
		for _, v := range d.Templating.List {
			defined = append(defined, v.Name)
			if q, ok := v.Query.(string); ok {
				exprs = append(exprs, q)
			}
		}
		var walk func([]panelJSON)
		walk = func(ps []panelJSON) {
			for _, p := range ps {
				walk(p.Panels)
				for _, tg := range p.Targets {
					exprs = append(exprs, tg.Expr)
				}
			}
		}
		walk(d.Panels)
		for _, e := range exprs {
			for _, m := range ref.FindAllStringSubmatch(e, -1) {
				if !slices.Contains(defined, m[1]) {
					t.Errorf("%s: a query names $%s, which the dashboard does not define (variables: %v)", f, m[1], defined[len(builtin):])
					break
				}
			}
		}
	}
}

type panelJSON struct {
	Panels  []panelJSON `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}
