package dashboards

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/vocab"
	"github.com/prometheus/prometheus/promql/parser"
)

var promqlParser = parser.NewParser(parser.Options{})

var update = flag.Bool("update", false, "rewrite the committed dashboards and the Helm chart's copies")

// chartDir holds the Helm chart's copies: Helm can only read files inside
// its chart.
const chartDir = "../deploy/helm/gpulens/files/dashboards"

func TestCommittedDashboardsAreGenerated(t *testing.T) {
	for _, s := range Schemas() {
		files, err := Generate(s, vocab.DefaultClusterLabel)
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{s, filepath.Join(chartDir, s)} {
			if *update {
				if err := os.RemoveAll(dir); err != nil {
					t.Fatal(err)
				}
				if _, err := Write(dir, s, vocab.DefaultClusterLabel); err != nil {
					t.Fatal(err)
				}
				continue
			}
			var names []string
			for _, f := range files {
				names = append(names, f.Name)
				got, err := os.ReadFile(filepath.Join(dir, f.Name))
				if err != nil {
					t.Fatalf("%v (run make generate)", err)
				}
				if !bytes.Equal(got, f.JSON) {
					t.Errorf("%s/%s is stale: run make generate", dir, f.Name)
				}
				decode(t, filepath.Join(dir, f.Name), got)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if !slices.Contains(names, e.Name()) {
					t.Errorf("%s/%s is not generated any more: run make generate", dir, e.Name())
				}
			}
		}
	}
}

func TestDashboardConventions(t *testing.T) {
	uids := map[string]bool{}
	for schema, ds := range generated(t) {
		for _, d := range ds {
			uid := *d.Uid
			if uids[uid] || len(uid) > 40 || !strings.HasSuffix(uid, schema) {
				t.Errorf("uid %q: want unique, at most 40 characters, ending in the schema", uid)
			}
			uids[uid] = true
			if !slices.Contains(d.Tags, "gpulens") {
				t.Errorf("%s: tags %v lack gpulens", uid, d.Tags)
			}
			if len(d.Templating.List) == 0 || d.Templating.List[0].Name != "datasource" || d.Templating.List[0].Type != "datasource" {
				t.Errorf("%s: the first variable must be the datasource", uid)
			}
			ids := map[uint32]bool{}
			for _, p := range d.Panels {
				var id uint32
				if p.RowPanel != nil {
					id = p.RowPanel.Id
				} else if p.Panel.Id != nil {
					id = *p.Panel.Id
				}
				if id == 0 || ids[id] {
					t.Errorf("%s: panel id %d is zero or repeated", uid, id)
				}
				ids[id] = true
			}
			for _, p := range panels(d) {
				where := uid + " / " + *p.Title
				if p.Datasource == nil || p.Datasource.Uid == nil || *p.Datasource.Uid != "${datasource}" {
					t.Errorf("%s: panel datasource is not ${datasource}", where)
				}
				if p.Description == nil || *p.Description == "" {
					t.Errorf("%s: no description", where)
				}
				if p.FieldConfig == nil || p.FieldConfig.Defaults.Unit == nil || *p.FieldConfig.Defaults.Unit == "" {
					t.Errorf("%s: no unit", where)
				}
				if slices.Contains([]string{"graph", "singlestat", "table-old"}, p.Type) {
					t.Errorf("%s: deprecated panel type %s", where, p.Type)
				}
			}
		}
	}
}

// rangeFunc matches a function over a range selector whose range is
// not a subquery's: those ranges must follow the scrape interval.
var rangeFunc = regexp.MustCompile(`\b(rate|irate|increase|changes|deriv)\(`)

func TestPanelExpressionsParse(t *testing.T) {
	for schema, ds := range generated(t) {
		parsed := 0
		defer func() {
			if parsed < 50 {
				t.Errorf("%s: only %d queries", schema, parsed)
			}
		}()
		for _, d := range ds {
			for _, q := range queries(t, d) {
				parsed++
				where := q.dashboard + " / " + q.panel
				expr, err := promqlParser.ParseExpr(substitute(q.expr))
				if err != nil {
					t.Errorf("%s: %v\n%s", where, err, q.expr)
					continue
				}
				parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
					// A subquery without a step takes the server's evaluation
					// interval: its figures would differ between servers.
					if sq, ok := n.(*parser.SubqueryExpr); ok && sq.Step == 0 {
						t.Errorf("%s: subquery without a step: %s", where, sq)
					}
					return nil
				})
				if strings.Contains(substitute(q.expr), "$") && !strings.Contains(q.expr, `"$1"`) {
					t.Errorf("%s: a variable is left after substitution: %s", where, substitute(q.expr))
				}
				if rangeFunc.MatchString(q.expr) && !strings.Contains(q.expr, "[$__rate_interval") {
					t.Errorf("%s: rates must use $__rate_interval: %s", where, q.expr)
				}
				// Single figures are computed by PromQL at the end of the range,
				// never reduced by Grafana from points (dcgm-exporter #146).
				if slices.Contains([]string{"stat", "bargauge", "table"}, q.kind) && !q.instant {
					t.Errorf("%s: a %s panel's query must be instant", where, q.kind)
				}
				if q.instant && expr.Type() != parser.ValueTypeVector && expr.Type() != parser.ValueTypeScalar {
					t.Errorf("%s: instant query of type %s", where, expr.Type())
				}
			}
		}
	}
}
