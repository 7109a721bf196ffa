package query

import (
	"strconv"
	"strings"
	"testing"
)

// TestRestrictRangeSelectors: a selector read from two labels (the host
// label's two spellings) becomes a union of its arms; a range selector
// cannot, so a per-series function of one is applied per arm and the
// results joined, and absent_over_time, which is not per series, is
// refused rather than answered wrongly.
func TestRestrictRangeSelectors(t *testing.T) {
	node := func(string) []restriction {
		return []restriction{{raw: []string{"Hostname", "hostname"}, r: keyRange{hi: "n", hasHi: true}}}
	}
	// The arms as restrict writes them: Hostname set and in range, or
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
		got, err := restrict(tt.expr, node)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("restrict(%s) = %s, %v; want an error containing %q", tt.expr, got, err, tt.err)
			}
		case err != nil:
			t.Errorf("restrict(%s): %v", tt.expr, err)
		case got != canonical(t, tt.want):
			t.Errorf("restrict(%s)\n got %s\nwant %s", tt.expr, got, canonical(t, tt.want))
		}
	}
}

// canonical is expr as the parser prints it, as restrict does: its
// matchers in its own order and quoting.
func canonical(t *testing.T, expr string) string {
	t.Helper()
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		t.Fatalf("want %s: %v", expr, err)
	}
	return e.String()
}
