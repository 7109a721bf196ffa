package report

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/internal/suggest"
)

// severities are the values a severity=... selector may name.
var severities = []string{string(findings.Critical), string(findings.Info), string(findings.Warning)}

// CheckSelector refuses a selector that could match no finding whatever
// the data holds: a label findings never carry (tema=team-nlp) or a kind
// or severity that does not exist (kind=idle-alocation). kubectl's -l
// accepts any key because any object may carry any label; a finding's
// labels are a closed set, so a typo would otherwise read as "nothing to
// act on". Values of the other labels depend on the data (ExplainNoMatch).
func CheckSelector(sel labels.Selector) error {
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		key := r.Key()
		if !slices.Contains(findingLabelKeys, key) {
			return fmt.Errorf("no finding carries the label %q%s: a finding's labels are %s",
				key, didYouMean(key, findingLabelKeys), strings.Join(findingLabelKeys, ", "))
		}
		var known []string
		var plural string
		switch key {
		case "kind":
			// A selector's values are strings, kubectl's; compared as such.
			for _, k := range findings.Kinds() {
				known = append(known, string(k))
			}
			plural = "kinds"
		case "severity":
			known, plural = severities, "severities"
		default:
			continue
		}
		for v := range r.Values() {
			if !slices.Contains(known, v) {
				return fmt.Errorf("%s %q is not a finding's %s%s: the %s are %s",
					key, v, key, didYouMean(v, known), plural, strings.Join(known, ", "))
			}
		}
	}
	return nil
}

// ExplainNoMatch says why namespaces and sel (-n and -l) selected none of
// all, the findings of the window, so that an empty answer is not read as
// "every workload is sized to its use": which named namespace or label
// value the data does not hold, with those it does, or that the data's
// findings simply match none. inData are the namespaces the window's
// allocations name (a namespace with pods but no findings is in the data).
// It returns "" when nothing was filtered.
func ExplainNoMatch(all []findings.Finding, inData []string, namespaces []string, sel labels.Selector) string {
	if len(namespaces) == 0 && sel.Empty() {
		return ""
	}
	known := map[string]bool{}
	for _, ns := range inData {
		known[ns] = true
	}
	for _, f := range all {
		if f.Namespace != "" {
			known[f.Namespace] = true
		}
	}
	if missing := slices.DeleteFunc(slices.Clone(namespaces), func(ns string) bool { return known[ns] }); len(missing) == len(namespaces) && len(missing) > 0 {
		return fmt.Sprintf("no namespace %s in the data (its namespaces: %s)", orList(missing), listOf(keysOf(known)))
	}
	if len(namespaces) > 0 {
		// The label values worth naming are those of the namespaces
		// asked for; where they hold no finding at all, that is the
		// answer, said with the window's count (not theirs, 0).
		total := len(all)
		all = slices.DeleteFunc(slices.Clone(all), func(f findings.Finding) bool { return !slices.Contains(namespaces, f.Namespace) })
		if len(all) == 0 {
			return fmt.Sprintf("no finding of the window is in namespace %s (%d %s in others)", orList(namespaces), total, plural(total, "is", "are"))
		}
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if op := r.Operator(); op != selection.Equals && op != selection.DoubleEquals && op != selection.In {
			continue
		}
		seen := map[string]bool{}
		for _, f := range all {
			if v, ok := FindingLabels(f)[r.Key()]; ok {
				seen[v] = true
			}
		}
		want := r.Values().UnsortedList()
		if !slices.ContainsFunc(want, func(v string) bool { return seen[v] }) {
			slices.Sort(want)
			if len(seen) == 0 {
				return fmt.Sprintf("no finding of the window has %s=%s: none carries %s", r.Key(), orList(want), r.Key())
			}
			return fmt.Sprintf("no finding of the window has %s=%s (the findings' values: %s)", r.Key(), orList(want), listOf(keysOf(seen)))
		}
	}
	what := []string{}
	if len(namespaces) > 0 {
		what = append(what, "-n "+strings.Join(namespaces, ","))
	}
	if !sel.Empty() {
		what = append(what, "-l "+sel.String())
	}
	return fmt.Sprintf("none of the window's %d findings match %s (info findings without a change are listed with --all)", len(all), strings.Join(what, " "))
}

func keysOf(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// listOf names at most ten values, so a fleet of a thousand namespaces
// does not fill the terminal.
func listOf(vs []string) string {
	const most = 10
	if len(vs) == 0 {
		return "none"
	}
	if len(vs) > most {
		return strings.Join(vs[:most], ", ") + fmt.Sprintf(" and %d more", len(vs)-most)
	}
	return strings.Join(vs, ", ")
}

func orList(vs []string) string { return strings.Join(vs, " or ") }

// didYouMean names the known value v was likely meant to be: a
// shortening of it (warn) or a near spelling (suggest.Nearest), else "".
func didYouMean(v string, known []string) string {
	for _, k := range known {
		if len(v) >= 3 && strings.HasPrefix(k, v) {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	if k, ok := suggest.Nearest(v, known); ok {
		return fmt.Sprintf(" (did you mean %q?)", k)
	}
	return ""
}
