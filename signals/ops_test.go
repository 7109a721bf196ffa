package signals_test

import (
	"testing"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/gpulens/gpulens/signals"
)

// The glue forms write what the rules and dashboards wrote by hand before
// them (their committed files did not change a byte), and PromQL parses
// them as meant: the expected strings are written out here, and the
// parser's own rendering of each shows its precedence.
func TestOps(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	for _, c := range []struct {
		got, want, parsed string
	}{
		{signals.Div("a", "b"), "a / b", "a / b"},
		{signals.Sub(signals.Mul("a", "b"), "c"), "a * b - c", "a * b - c"},
		{signals.Add("a", "b"), "a + b", "a + b"},
		{signals.Or("a", signals.Zeroed("b")), "a or b * 0", "a or b * 0"},
		{signals.ZeroOne("a"), "0 * a + 1", "0 * a + 1"},
		{signals.Oned("a"), "a * 0 + 1", "a * 0 + 1"},
		// Paren keeps a sum whole before the division.
		{signals.Div(signals.Paren(signals.OrZero("a")), "b"), "(a or vector(0)) / b", "(a or vector(0)) / b"},
		{signals.Monthly("a"), "a * 730", "a * 730"},
		{signals.MinutesToHours("a"), "(a / 60)", "(a / 60)"},
		{signals.SecondsToHours("a"), "a / 3600", "a / 3600"},
		{signals.Select("m", signals.MatchRe("cluster", "$cluster"), signals.MatchEq("kind", "banked")),
			`m{cluster=~"$cluster", kind="banked"}`, `m{cluster=~"$cluster",kind="banked"}`},
		{signals.Select("m", signals.MatchAnyOf("state", "used", "idle")), `m{state=~"used|idle"}`, `m{state=~"used|idle"}`},
		// A value is a value, not a pattern: "a.b" must not match "axb",
		// nor "x|y" match every x.
		{signals.Select("m", signals.MatchAnyOf("ns", "a.b", "x|y")), `m{ns=~"a\\.b|x\\|y"}`, `m{ns=~"a\\.b|x\\|y"}`},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
			continue
		}
		e, err := p.ParseExpr(c.got)
		if err != nil {
			t.Errorf("%q does not parse: %v", c.got, err)
			continue
		}
		if e.String() != c.parsed {
			t.Errorf("%q parses as %q, want %q", c.got, e.String(), c.parsed)
		}
	}
	// A matcher's value is quoted as PromQL reads a string.
	if got := string(signals.MatchEq("l", `a"b`)); got != `l="a\"b"` {
		t.Errorf("MatchEq quotes %q", got)
	}
	if got := signals.LabelValues(signals.Select("m", signals.MatchRe("cluster", "$cluster")), "namespace"); got != `label_values(m{cluster=~"$cluster"}, namespace)` {
		t.Errorf("LabelValues = %q", got)
	}
	if got := signals.QueryResult("count by (node) (x)"); got != "query_result(count by (node) (x))" {
		t.Errorf("QueryResult = %q", got)
	}
}
