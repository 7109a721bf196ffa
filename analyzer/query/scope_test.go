package query

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestScope: what one read reads, written into its expression: a
// cluster is an equality on every selector, wherever it is in the
// expression; a shard is a range of the value of the labels its metric
// carries it in; a shard of one cluster is both, the shard's matchers
// first. The zero Scope leaves the expression as it is, unparsed.
func TestScope(t *testing.T) {
	below := func(v string) string { return strconv.Quote(atLeast(v)) }
	eu := Cluster("cluster", "eu")
	// A node shard [gpu-b, gpu-d) of the metrics that carry a node (not
	// up), read from one label.
	nodes := func(metric string) []restriction {
		if metric == "up" {
			return nil
		}
		return []restriction{{raw: []string{"node"}, r: keyRange{lo: "gpu-b", hi: "gpu-d", hasLo: true, hasHi: true}}}
	}
	shard := `node=~` + below("gpu-b") + `, node!~` + below("gpu-d")
	// dcgm-exporter's host, read from Hostname or hostname: two arms.
	hosts := func(string) []restriction {
		return []restriction{{raw: []string{"Hostname", "hostname"}, r: keyRange{hi: "n", hasHi: true}}}
	}
	old := `Hostname!="", Hostname!~` + below("n")
	cur := `Hostname="", hostname!~` + below("n")
	for _, tt := range []struct {
		name  string
		scope Scope
		expr  string
		want  string
	}{
		{name: "plain selector", scope: eu, expr: `util`, want: `util{cluster="eu"}`},
		{name: "matcher on the same label kept and anded", scope: eu, expr: `util{cluster=~"e.*",gpu="0"}`,
			want: `util{cluster=~"e.*",gpu="0",cluster="eu"}`},
		{name: "range selector in a subquery", scope: eu, expr: `max_over_time((sum by (node) (rate(energy[5m])))[1h:1m])`,
			want: `max_over_time((sum by (node) (rate(energy{cluster="eu"}[5m])))[1h:1m])`},
		{name: "both sides of a join", scope: eu, expr: `alloc * on (node) group_left () max by (node) (up)`,
			want: `alloc{cluster="eu"} * on (node) group_left () max by (node) (up{cluster="eu"})`},
		{name: "series without the label", scope: Cluster("cluster", ""), expr: `last_over_time(util[5m])`,
			want: `last_over_time(util{cluster=""}[5m])`},
		{name: "shard of one cluster", scope: eu.within(nodes), expr: `sum by (node) (util) / count(up)`,
			want: `sum by (node) (util{` + shard + `, cluster="eu"}) / count(up{cluster="eu"})`},
		{name: "shard alone", scope: Scope{}.within(nodes), expr: `util`, want: `util{` + shard + `}`},
		{name: "shard of one cluster read from two labels, per arm", scope: eu.within(hosts), expr: `last_over_time(FB_USED[5m])`,
			want: `(last_over_time(FB_USED{` + old + `, cluster="eu"}[5m]) or last_over_time(FB_USED{` + cur + `, cluster="eu"}[5m]))`},
		{name: "nothing", scope: Scope{}, expr: `sum(util)  by (node)`, want: `sum(util)  by (node)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.scope.apply(tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if tt.scope.every != nil || tt.scope.of != nil {
				want = canonical(t, want)
			}
			if got != want {
				t.Errorf("apply(%s)\n got %s\nwant %s", tt.expr, got, want)
			}
		})
	}
	if _, err := eu.apply(`util{`); err == nil {
		t.Error("an expression that does not parse was scoped")
	}
}

// TestClusterRange: a cluster's range is its one value, "" included.
func TestClusterRange(t *testing.T) {
	for _, tt := range []struct {
		value, v string
		want     bool
	}{{"eu", "eu", true}, {"eu", "eu2", false}, {"eu", "", false}, {"", "", true}, {"", "eu", false}} {
		if got := exactly(tt.value).contains(tt.v); got != tt.want {
			t.Errorf("exactly(%q).contains(%q) = %v, want %v", tt.value, tt.v, got, tt.want)
		}
	}
	if exactly("").all() {
		t.Error(`exactly("") reads every series; it reads those without the label`)
	}
}

// restricted is qs scoped to pick's restrictions alone: a shard's
// queries as AnalyzeScoped reads them.
func restricted(qs []namedQuery, pick func(string) []restriction) ([]namedQuery, error) {
	sc := Scope{}.within(pick)
	out := make([]namedQuery, len(qs))
	for i, q := range qs {
		expr, err := sc.apply(q.expr)
		if err != nil {
			return nil, fmt.Errorf("analysis query %q: %w", q.name, err)
		}
		out[i] = q
		out[i].expr = expr
	}
	return out, nil
}

// TestRestrictRangeSelectors: a selector read from two labels (the host
// label's two spellings) becomes a union of its arms; a range selector
// cannot, so a per-series function of one is applied per arm and the
// results joined, and absent_over_time, which is not per series, is
// refused rather than answered wrongly.
func TestRestrictRangeSelectors(t *testing.T) {
	node := func(string) []restriction {
		return []restriction{{raw: []string{"Hostname", "hostname"}, r: keyRange{hi: "n", hasHi: true}}}
	}
	// The arms as apply writes them: Hostname set and in range, or
	// Hostname empty and hostname in range.
	below := strconv.Quote(atLeast("n"))
	old := `Hostname!="", Hostname!~` + below
	cur := `Hostname="", hostname!~` + below
	for _, tt := range []struct {
		expr, want, err string
	}{
		{expr: `FB_USED{gpu="0"}`, want: `(FB_USED{` + old + `,gpu="0"} or FB_USED{` + cur + `,gpu="0"})`},
		{expr: `last_over_time(FB_USED[15m] offset -15m)`,
			want: `(last_over_time(FB_USED{` + old + `}[15m] offset -15m) or last_over_time(FB_USED{` + cur + `}[15m] offset -15m))`},
		{expr: `quantile_over_time(0.9, FB_USED[1h])`,
			want: `(quantile_over_time(0.9, FB_USED{` + old + `}[1h]) or quantile_over_time(0.9, FB_USED{` + cur + `}[1h]))`},
		{expr: `absent_over_time(FB_USED[5m])`, err: "cannot shard"},
		{expr: `count_over_time((FB_USED)[1h:1m])`, want: `count_over_time(((FB_USED{` + old + `} or FB_USED{` + cur + `}))[1h:1m])`},
	} {
		got, err := Scope{}.within(node).apply(tt.expr)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("apply(%s) = %s, %v; want an error containing %q", tt.expr, got, err, tt.err)
			}
		case err != nil:
			t.Errorf("apply(%s): %v", tt.expr, err)
		case got != canonical(t, tt.want):
			t.Errorf("apply(%s)\n got %s\nwant %s", tt.expr, got, canonical(t, tt.want))
		}
	}
}

// canonical is expr as the parser prints it, as apply does: its
// matchers in its own order and quoting.
func canonical(t *testing.T, expr string) string {
	t.Helper()
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		t.Fatalf("want %s: %v", expr, err)
	}
	return e.String()
}
