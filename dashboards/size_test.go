package dashboards

import (
	"encoding/json"
	"testing"

	"github.com/gpulens/gpulens/vocab"
)

// Where the dashboards are deployed limits their size:
//   - client-side `kubectl apply` keeps the whole object in the
//     last-applied-configuration annotation, and Argo CD its own copy:
//     an annotation is at most 256 KiB, so a ConfigMap holding a larger
//     dashboard is refused;
//   - VictoriaMetrics refuses a query over -search.maxQueryLen, 16 KiB by
//     default, and Grafana sends each panel's and variable's query whole.
const (
	maxDashboardBytes = 256 * 1024
	maxQueryBytes     = 16 * 1024
)

// TestDashboardsFitWhereTheyDeploy: every generated dashboard of both
// schemas fits an annotation, and each of its queries VictoriaMetrics'
// default limit. Where a signal's form would not, the schema's rule file
// records it (alerts/, vocab.RecordDCGMAllocation) and the panels read
// the recording. `go test ./dashboards -run FitWhere -v` prints the
// sizes.
func TestDashboardsFitWhereTheyDeploy(t *testing.T) {
	for _, schema := range Schemas() {
		files, err := Generate(schema, vocab.DefaultClusterLabel)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			where := schema + "/" + f.Name
			exprs := queryTexts(t, where, f.JSON)
			longest := 0
			for _, e := range exprs {
				longest = max(longest, len(e.text))
				if len(e.text) > maxQueryBytes {
					t.Errorf("%s / %s: a %d-byte query, over VictoriaMetrics' default -search.maxQueryLen of %d: record it (alerts/)", where, e.where, len(e.text), maxQueryBytes)
				}
			}
			t.Logf("%s: %d bytes, %d queries, the longest %d bytes", where, len(f.JSON), len(exprs), longest)
			if len(f.JSON) > maxDashboardBytes {
				t.Errorf("%s is %d bytes, over the %d that kubectl apply's and Argo CD's annotation holds", where, len(f.JSON), maxDashboardBytes)
			}
			if len(exprs) == 0 {
				t.Errorf("%s: no queries found: the size check reads nothing", where)
			}
		}
	}
}

// queryText is one query a dashboard sends, and where it is.
type queryText struct{ where, text string }

// queryTexts are the dashboard's panel queries and variable queries, read
// from the JSON as Grafana reads it (not from the specs), so that nothing
// the builders add escapes the check.
func queryTexts(t *testing.T, where string, data []byte) []queryText {
	t.Helper()
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				RefID string `json:"refId"`
				Expr  string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var out []queryText
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, queryText{p.Title + " / " + tg.RefID, tg.Expr})
		}
	}
	for _, v := range d.Templating.List {
		var q string
		if json.Unmarshal(v.Query, &q) == nil && q != "" {
			out = append(out, queryText{"variable " + v.Name, q})
		}
	}
	return out
}

// The check must be able to fail: a query or a file over its limit is
// seen as such.
func TestQueryTextsSeeEveryQuery(t *testing.T) {
	long := make([]byte, maxQueryBytes+1)
	for i := range long {
		long[i] = 'x'
	}
	data, err := json.Marshal(map[string]any{
		"panels":     []any{map[string]any{"title": "p", "targets": []any{map[string]any{"refId": "A", "expr": string(long)}}}},
		"templating": map[string]any{"list": []any{map[string]any{"name": "node", "query": "label_values(up, node)"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := queryTexts(t, "test", data)
	if len(q) != 2 || len(q[0].text) <= maxQueryBytes || q[1].where != "variable node" {
		t.Errorf("queryTexts = %d queries %v, want the panel's long one and the variable's", len(q), q)
	}
}
