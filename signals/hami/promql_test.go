package hami

import (
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/gpulens/gpulens/signals"
)

// TestFormsInScope: the forms in a scope are the whole store's where the
// scope is empty; otherwise every selector has the scope's matchers, the
// tenant's series its namespace (under each of its spellings), the
// scheduler's its node, the monitor's the scheduler's GPUs there, and
// every per-container aggregation keeps the team label.
func TestFormsInScope(t *testing.T) {
	whole := In(signals.Scope{})
	for name, pair := range map[string][2]string{
		"held": {whole.HeldShare(), HeldShare()}, "used": {whole.UsedShare(), UsedShare()},
		"cores": {whole.HeldCores(), HeldCores()}, "mem": {whole.HeldMemory(), HeldMemory()},
	} {
		if pair[0] != pair[1] {
			t.Errorf("%s in the empty scope differs from the store's", name)
		}
	}
	f := In(signals.Scope{Matchers: `cluster="eu"`, Node: "gpu-a", Namespace: "team-nlp", Pod: "ignored", KeepTenant: "team"})
	p := parser.NewParser(parser.Options{})
	for name, form := range map[string]string{"held": f.HeldShare(), "used": f.UsedShare(), "cores": f.HeldCores(), "mem": f.HeldMemory(), "usedcores": f.UsedCores()} {
		e, err := p.ParseExpr(form)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, form)
		}
		parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
			switch n := n.(type) {
			case *parser.VectorSelector:
				mt, era, ok := MetricOf(n.Name)
				if !ok {
					t.Errorf("%s: selector of %q, not HAMi's", name, n.Name)
					return nil
				}
				if !hasMatcher(n.LabelMatchers, "cluster", "eu") {
					t.Errorf("%s: %s without the cluster", name, n)
				}
				if mt.Scope != ScopeDevice && !hasMatcher(n.LabelMatchers, map[Era]string{EraLegacy: "podnamespace", EraCurrent: "namespace"}[era], "team-nlp") &&
					!hasMatcher(n.LabelMatchers, "exported_namespace", "team-nlp") {
					t.Errorf("%s: %s without the namespace", name, n)
				}
				if mt.Component == Scheduler && !hasMatcher(n.LabelMatchers, map[Era]string{EraLegacy: "nodename", EraCurrent: "node"}[era], "gpu-a") &&
					!hasMatcher(n.LabelMatchers, "nodeid", "gpu-a") {
					t.Errorf("%s: %s without the node", name, n)
				}
			case *parser.AggregateExpr:
				if n.Op == parser.MAX && strings.Contains(n.String(), "pod") && !containsStr(n.Grouping, "team") {
					t.Errorf("%s: %s drops the team label", name, n.Grouping)
				}
			}
			return nil
		})
	}
	// The monitor names no node: its series are the GPUs the scheduler
	// places on the node.
	if !strings.Contains(f.UsedCores(), "and on (uuid)") {
		t.Errorf("UsedCores in a node is not joined to the scheduler's GPUs there: %s", f.UsedCores())
	}
}

func hasMatcher(ms []*labels.Matcher, name, value string) bool {
	for _, m := range ms {
		if m.Name == name && m.Matches(value) && !m.Matches("some-other-value") {
			return true
		}
	}
	return false
}

func containsStr(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
