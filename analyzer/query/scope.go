package query

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// Scope is the series one read of the store reads: those within every
// restriction it holds. It is the analysis's one way of narrowing what it
// reads. A cluster of a shared store is an equality on the cluster label
// (Cluster); a shard is a range of nodes or of tenant namespaces and pods
// (AnalyzeScoped narrows its scope within); a shard of one cluster is
// both. apply writes it into an expression once, before either the
// raw-sample scan or the engine reads it (instantQuery, passWindow), so
// the two read the same series and nothing wraps the source. The zero
// Scope reads every series.
//
// The schemas' own signals.Scope is not this: it is what the dashboards
// and rules, which Grafana and Prometheus evaluate and no read of ours
// sees, write into their expressions ($cluster, $node). The analysis
// writes its expressions under the zero signals.Scope and narrows them
// here.
type Scope struct {
	// every holds on every series, whatever its metric (a cluster's).
	every []restriction
	// of, when set, are the restrictions of one metric's series: a
	// shard's, since the label a node or a namespace is read from
	// depends on the metric, and some (up) are never sharded.
	of func(metric string) []restriction
}

// Cluster is the scope of one cluster of a shared store: the series whose
// label is value, or, where value is "", the series without the label.
// Through it an analysis of a shared store is, query for query, the
// analysis of that cluster's own Prometheus.
func Cluster(label, value string) Scope {
	return Scope{every: []restriction{{raw: []string{label}, r: exactly(value)}}}
}

// within is s narrowed further by pick's restrictions of each metric.
func (s Scope) within(pick func(metric string) []restriction) Scope {
	outer := s.of
	s.of = func(metric string) []restriction {
		if outer == nil {
			return pick(metric)
		}
		return slices.Concat(outer(metric), pick(metric))
	}
	return s
}

// restrictions are those of metric's series: the metric's own (a
// shard's) before those of every series (a cluster's), the order their
// matchers are written in.
func (s Scope) restrictions(metric string) []restriction {
	var out []restriction
	if s.of != nil {
		out = s.of(metric)
	}
	return append(slices.Clip(out), s.every...)
}

// apply is expr reading only the scope's series: every vector selector,
// inside range selectors, subqueries and both sides of every join, gets
// the matchers of its metric's restrictions. A selector that already has
// a matcher on the label keeps it, and PromQL ands them. A restriction
// read from two labels makes a selector the union of its copies
// (rewrite). The zero Scope leaves expr as it is, unparsed.
func (s Scope) apply(expr string) (string, error) {
	if len(s.every) == 0 && s.of == nil {
		return expr, nil
	}
	e, err := promqlParser.ParseExpr(expr)
	if err != nil {
		return "", fmt.Errorf("parsing %q to scope it: %w", expr, err)
	}
	e, err = rewrite(e, s.restrictions, false)
	if err != nil {
		return "", err
	}
	return e.String(), nil
}

// keyRange is the half-open interval [lo, hi) of a label value in byte
// order; an unset bound is open. The ranges of one shard plan are
// adjacent and cover every string, "" included, so every series falls in
// exactly one shard whether or not the probe saw its value. A range of
// one value (exactly) is lo alone, matched by equality: a cluster's.
type keyRange struct {
	lo, hi       string
	hasLo, hasHi bool
	one          bool
}

// exactly is the range of v alone; "" is the series without the label.
func exactly(v string) keyRange { return keyRange{lo: v, one: true} }

func (r keyRange) all() bool { return !r.one && !r.hasLo && !r.hasHi }

// contains is r's test in Go, for the plan's own bookkeeping.
func (r keyRange) contains(v string) bool {
	if r.one {
		return v == r.lo
	}
	return (!r.hasLo || v >= r.lo) && (!r.hasHi || v < r.hi)
}

// atLeast is a regular expression matching exactly the strings s >= lo in
// byte order (PromQL anchors it): s has lo as a prefix, or at the first
// rune where they differ s has the greater one. Nested, its length is
// linear in lo's; UTF-8's byte order is its code points' order.
func atLeast(lo string) string {
	runes := []rune(lo)
	expr := ".*"
	for i := len(runes) - 1; i >= 0; i-- {
		expr = fmt.Sprintf(`(?:%s%s|%s)`, regexp.QuoteMeta(string(runes[i])), expr, above(runes[i]))
	}
	return expr
}

// above matches a rune greater than r, then anything. Below 'A' it is two
// classes, split at 'Z': every regular expression is printed once more
// where it is compiled (Prometheus's labels.NewFastRegexMatcher, the
// engine's parser, tsdb's inverse of a != matcher, per block), and
// printing a class looks for a rune of it whose case fold it lacks,
// through every rune up to U+1E943 before it concludes there is none.
// [^\x00-r] for r a digit or '-' has none, 1-2 ms each; each class of
// the two lacks 'a' or 'A'. At 10,000 GPUs the shards' node bounds
// (node-1234) took a quarter of an analysis's CPU in that search.
func above(r rune) string {
	if r >= 'A' {
		return fmt.Sprintf(`[^\x00-\x{%x}].*`, r)
	}
	return fmt.Sprintf(`[\x{%x}-Z].*|[^\x00-Z].*`, r+1)
}

// rangeMatchers select the values of label in r.
func rangeMatchers(label string, r keyRange) []*labels.Matcher {
	if r.one {
		return []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, label, r.lo)}
	}
	var ms []*labels.Matcher
	if r.hasLo {
		ms = append(ms, labels.MustNewMatcher(labels.MatchRegexp, label, atLeast(r.lo)))
	}
	if r.hasHi {
		ms = append(ms, labels.MustNewMatcher(labels.MatchNotRegexp, label, atLeast(r.hi)))
	}
	return ms
}

// restriction is one constraint of a Scope on the series a selector
// reads: the logical value (a cluster, a node, a tenant's namespace)
// lies in r, and the value is read from raw, the first of the labels that is not empty
// (as the schemas' label_replace chains read it: dcgm-exporter's
// hostname over Hostname, exported_namespace over namespace).
type restriction struct {
	raw []string
	r   keyRange
}

// arms are the conjunctions of matchers whose union is the restriction:
// arm i has raw[:i] empty and raw[i] set and in range; the last arm takes
// an empty value too. They are disjoint, so their union neither loses nor
// repeats a series.
func (x restriction) arms() [][]*labels.Matcher {
	var out [][]*labels.Matcher
	for i, l := range x.raw {
		var ms []*labels.Matcher
		for _, prev := range x.raw[:i] {
			ms = append(ms, labels.MustNewMatcher(labels.MatchEqual, prev, ""))
		}
		if i < len(x.raw)-1 {
			ms = append(ms, labels.MustNewMatcher(labels.MatchNotEqual, l, ""))
		}
		out = append(out, append(ms, rangeMatchers(l, x.r)...))
	}
	return out
}

func metricName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// rewrite restricts every vector selector of e to the series within every
// restriction pick gives its metric (none: the selector is left as it is).
// A selector whose restrictions have one arm gets the arm's matchers; one
// with several becomes the union of its copies, one per arm, which PromQL
// allows wherever an instant vector is. Inside a range selector it cannot
// (perArm), and where perArm does not apply it is refused.
func rewrite(e parser.Expr, pick func(string) []restriction, inRange bool) (parser.Expr, error) {
	var err error
	sub := func(x parser.Expr) parser.Expr {
		if err != nil || x == nil {
			return x
		}
		var out parser.Expr
		out, err = rewrite(x, pick, false)
		return out
	}
	switch n := e.(type) {
	case *parser.VectorSelector:
		arms := selectorArms(n, pick)
		if len(arms) == 1 && len(arms[0]) == 0 {
			return n, nil
		}
		if len(arms) > 1 && inRange {
			return nil, fmt.Errorf("cannot shard the range selector %s: its series are read from more than one label", n)
		}
		var parts []parser.Expr
		for _, ms := range arms {
			c := *n
			c.LabelMatchers = append(append([]*labels.Matcher{}, n.LabelMatchers...), ms...)
			parts = append(parts, &c)
		}
		return unionOf(parts), nil
	case *parser.Call:
		if u, ok, err := perArm(n, pick); ok || err != nil {
			return u, err
		}
		for i := range n.Args {
			n.Args[i] = sub(n.Args[i])
		}
	case *parser.MatrixSelector:
		vs, rerr := rewrite(n.VectorSelector, pick, true)
		if rerr != nil {
			return nil, rerr
		}
		n.VectorSelector = vs
	case *parser.AggregateExpr:
		n.Expr, n.Param = sub(n.Expr), sub(n.Param)
	case *parser.BinaryExpr:
		n.LHS, n.RHS = sub(n.LHS), sub(n.RHS)
	case *parser.SubqueryExpr:
		n.Expr = sub(n.Expr)
	case *parser.ParenExpr:
		n.Expr = sub(n.Expr)
	case *parser.UnaryExpr:
		n.Expr = sub(n.Expr)
	case *parser.StepInvariantExpr:
		n.Expr = sub(n.Expr)
	case *parser.NumberLiteral, *parser.StringLiteral:
	default:
		return nil, fmt.Errorf("cannot shard %q: unknown PromQL node %T", strings.TrimSpace(e.String()), e)
	}
	return e, err
}

// selectorArms are the conjunctions of matchers, one per arm, that
// restrict n: the cross product of the arms of every restriction of its
// metric; one empty arm where none restricts it.
func selectorArms(n *parser.VectorSelector, pick func(string) []restriction) [][]*labels.Matcher {
	arms := [][]*labels.Matcher{nil}
	for _, x := range pick(metricName(n)) {
		if x.r.all() {
			continue
		}
		var next [][]*labels.Matcher
		for _, a := range arms {
			for _, b := range x.arms() {
				next = append(next, append(slices.Clone(a), b...))
			}
		}
		arms = next
	}
	return arms
}

// unionOf is the parts joined by or, in parentheses where there are
// several.
func unionOf(parts []parser.Expr) parser.Expr {
	union := parts[0]
	for _, p := range parts[1:] {
		union = &parser.BinaryExpr{Op: parser.LOR, LHS: union, RHS: p, VectorMatching: &parser.VectorMatching{Card: parser.CardManyToMany}}
	}
	if len(parts) > 1 {
		return &parser.ParenExpr{Expr: union}
	}
	return union
}

// perArm shards a function of a range selector whose series are read
// from more than one label (dcgm-exporter's two host label spellings): a
// range selector cannot be a union, but a function that maps each series
// to its own result (last_over_time, rate, ...) can be applied to each
// arm, and the results joined, since the arms are disjoint. ok is false
// where the call has no such argument.
func perArm(n *parser.Call, pick func(string) []restriction) (parser.Expr, bool, error) {
	// A PromQL function takes at most one range vector.
	at := slices.IndexFunc(n.Args, func(a parser.Expr) bool { _, ok := a.(*parser.MatrixSelector); return ok })
	if at < 0 {
		return nil, false, nil
	}
	m := n.Args[at].(*parser.MatrixSelector)
	vs, ok := m.VectorSelector.(*parser.VectorSelector)
	if !ok {
		return nil, false, nil
	}
	arms := selectorArms(vs, pick)
	if len(arms) < 2 {
		return nil, false, nil
	}
	if n.Func.Name == "absent_over_time" {
		// Not per series: absent from one arm is not absent from all.
		return nil, true, fmt.Errorf("cannot shard %s: its series are read from more than one label", n)
	}
	var parts []parser.Expr
	for _, ms := range arms {
		v := *vs
		v.LabelMatchers = append(append([]*labels.Matcher{}, vs.LabelMatchers...), ms...)
		mc := *m
		mc.VectorSelector = &v
		c := *n
		c.Args = slices.Clone(n.Args)
		c.Args[at] = &mc
		parts = append(parts, &c)
	}
	return unionOf(parts), true, nil
}
