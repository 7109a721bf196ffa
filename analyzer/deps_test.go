// Package analyzer_test holds what is asserted of the analyzer's packages
// together: which of them may link what.
package analyzer_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/gpulens/gpulens/"

// engine is what reading the store or the cluster links: the Prometheus
// engine and TSDB (through analyzer/query and analyzer/source), and
// client-go with the Kubernetes API types (through the inventory's reader).
var engine = []string{
	"github.com/prometheus/prometheus/promql",
	"github.com/prometheus/prometheus/tsdb",
	"k8s.io/client-go",
	"k8s.io/api",
	module + "analyzer/query",
	module + "analyzer/source",
	module + "analyzer/scan",
	module + "analyzer/inventory/kube",
}

// TestModelConsumersLinkNoEngine: the packages that judge, price, plan and
// write an analysis read the model (analyzer/fleet, analyzer/inventory)
// and never the store or the cluster, so they link neither (issue 43: the
// report linked 1,051 packages when the model lived beside the executor).
// plan and quota too: the plan's lanes come from the analysis's own passes.
func TestModelConsumersLinkNoEngine(t *testing.T) {
	for _, tt := range []struct {
		pkg       string
		forbidden []string
		// todo names a dependency that is on its way out: while the
		// package still links it, the check is skipped with the reason.
		todo, why string
	}{
		{pkg: "fleet", forbidden: []string{"github.com/prometheus", "k8s.io", "google.golang.org/protobuf", module + "signals"}},
		{pkg: "inventory", forbidden: append([]string{"k8s.io"}, engine...)},
		{pkg: "findings", forbidden: engine},
		{pkg: "recommend", forbidden: engine},
		{pkg: "report", forbidden: engine},
		// The ledger is a leaf over the model: prices and the MIG catalog.
		{pkg: "ledger", forbidden: append([]string{"k8s.io", module + "analyzer/findings", module + "analyzer/report", module + "analyzer/recommend"}, engine...)},
		// The team roll-ups are money over the model and the ledger: the
		// analysis builds them, and the report and serve's series render
		// them, so they link neither (issue 55).
		{pkg: "rollup", forbidden: append([]string{"k8s.io", module + "signals", module + "analyzer/findings", module + "analyzer/recommend",
			module + "analyzer/report", module + "analyzer/series", module + "analyzer/plan"}, engine...)},
		// Prices are a leaf that every reader of money shares (issue 55).
		{pkg: "price", forbidden: append([]string{"k8s.io", module + "signals", module + "analyzer/fleet", module + "analyzer/inventory",
			module + "analyzer/findings", module + "analyzer/recommend", module + "analyzer/ledger", module + "analyzer/report", module + "analyzer/plan"}, engine...)},
		// serve's /metrics renders the analysis's figures, not the report.
		{pkg: "series", forbidden: append([]string{module + "analyzer/report"}, engine...)},
		{pkg: "plan", forbidden: engine},
		{pkg: "quota", forbidden: engine},
	} {
		t.Run(tt.pkg, func(t *testing.T) {
			g := importGraph(t, "./"+tt.pkg)
			root := module + "analyzer/" + tt.pkg
			if tt.todo != "" && g.path(root, tt.todo) != nil {
				t.Skipf("TODO: %s", tt.why)
			}
			for _, f := range tt.forbidden {
				for _, pkg := range g.sorted() {
					if pkg == f || strings.HasPrefix(pkg, f+"/") {
						t.Errorf("analyzer/%s links %s: %s", tt.pkg, pkg, strings.Join(g.path(root, pkg), " → "))
						break
					}
				}
			}
		})
	}
}

// TestReasoningLinksNoSignals: the packages that reason about a fleet
// name its facts (sharing modes, allocation paths, resource and schema
// names) from vocab, and never link signals/, the PromQL that reads them
// (issue 55: 24 files imported signals for six constants).
func TestReasoningLinksNoSignals(t *testing.T) {
	for _, pkg := range []string{"findings", "ledger", "rollup", "report", "plan", "recommend", "inventory", "fleet", "price"} {
		t.Run(pkg, func(t *testing.T) {
			g := importGraph(t, "./"+pkg)
			if chain := g.path(module+"analyzer/"+pkg, module+"signals"); chain != nil {
				t.Errorf("analyzer/%s links signals/: %s", pkg, strings.Join(chain, " → "))
			}
		})
	}
}

// TestMoneyReadersImportNoRecommend: the ledger and the report price
// through analyzer/price, not through the recommendations. The report
// still links recommend through findings (a finding carries its
// recommendation), so its rule is on its own imports.
func TestMoneyReadersImportNoRecommend(t *testing.T) {
	for _, pkg := range []string{"ledger", "rollup", "report"} {
		root := module + "analyzer/" + pkg
		if imports := importGraph(t, "./"+pkg)[root]; slices.Contains(imports, module+"analyzer/recommend") {
			t.Errorf("analyzer/%s imports analyzer/recommend; price through analyzer/price", pkg)
		}
	}
}

// TestReportDependencies: issue 55's bound on what the report links, the
// standard library included (281 before: signals' PromQL through the
// findings, and net/http through the webhook, now internal/webhook).
func TestReportDependencies(t *testing.T) {
	const limit = 210
	if n := len(importGraph(t, "./report")); n >= limit {
		t.Errorf("analyzer/report links %d packages, want fewer than %d", n, limit)
	}
}

// graph maps each package of `go list -deps` to its imports.
type graph map[string][]string

func importGraph(t *testing.T, pkg string) graph {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	g := graph{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		g[f[0]] = f[1:]
	}
	return g
}

func (g graph) sorted() []string {
	out := make([]string, 0, len(g))
	for p := range g {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// path is a shortest chain of imports from root to a package that is to,
// or under it; nil when there is none. It names the edge to cut.
func (g graph) path(root, to string) []string {
	prev := map[string]string{root: ""}
	queue := []string{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to || strings.HasPrefix(p, to+"/") {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, strings.TrimPrefix(p, module))
			}
			slices.Reverse(chain)
			return chain
		}
		for _, q := range g[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}
