package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/internal/mig"
)

// sliceGroup is the catalog's MIG models that share a number of compute
// slices (7 on A100 and Hopper, 4 on A30): a share is slices over that
// total, and PromQL selects the group's GPUs by their model label.
type sliceGroup struct {
	total    int
	slices   []int    // the compute slice counts of the group's profiles
	patterns []string // the models' product-name patterns
}

// sliceGroups groups internal/mig's catalog by total compute slices. A
// product name matching patterns of two groups would be excluded from
// both (see modelMatchers); internal/mig's table test keeps the real names
// unambiguous.
var sliceGroups = func() []sliceGroup {
	var out []sliceGroup
	for _, m := range mig.Models() {
		i := slices.IndexFunc(out, func(g sliceGroup) bool { return g.total == m.ComputeSlices })
		if i < 0 {
			out = append(out, sliceGroup{total: m.ComputeSlices})
			i = len(out) - 1
		}
		g := &out[i]
		g.patterns = append(g.patterns, m.Pattern)
		for _, p := range m.Profiles {
			if !slices.Contains(g.slices, p.ComputeSlices) {
				g.slices = append(g.slices, p.ComputeSlices)
			}
		}
		slices.Sort(g.slices)
	}
	return out
}()

// anyOf is a PromQL regex (fully anchored by PromQL, case-insensitive)
// matching a name that contains any of the patterns.
func anyOf(patterns []string) string {
	return strconv.Quote("(?i).*(?:" + strings.Join(patterns, "|") + ").*")
}

// modelMatchers selects, on the model label named label, the GPUs of g's
// models and of no other group's.
func modelMatchers(label string, g sliceGroup) string {
	var others []string
	for _, o := range sliceGroups {
		if o.total != g.total {
			others = append(others, o.patterns...)
		}
	}
	m := label + "=~" + anyOf(g.patterns)
	if len(others) > 0 {
		m += ", " + label + "!~" + anyOf(others)
	}
	return m
}

// unknownModel selects, on label, the GPUs of models the catalog lacks.
func unknownModel(label string) string {
	var all []string
	for _, g := range sliceGroups {
		all = append(all, g.patterns...)
	}
	return label + "!~" + anyOf(all)
}

// migTotal is, per GPU (GPULabels), the compute slices of its model: of
// metric, any series per GPU whose model label is named label, put
// through rename to normalise its labels. A model the catalog lacks has
// no series: what depends on it is unknown rather than divided by a
// guess. matchers, if not empty, narrow metric further ("a=\"b\", "): the
// engine evaluates a divisor at every step even where the dividend is
// empty, so leaving out the GPUs known not to be in MIG mode keeps a fleet
// of whole GPUs from paying for it.
func migTotal(metric, matchers, label string, rename func(string) string) string {
	var parts []string
	for _, g := range sliceGroups {
		parts = append(parts, fmt.Sprintf("0 * %s + %d", rename(metric+"{"+matchers+modelMatchers(label, g)+"}"), g.total))
	}
	return "max by " + by(GPULabels) + " (" + union(parts) + ")"
}
