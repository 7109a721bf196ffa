package signals

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/internal/mig"
)

// SliceGroup is internal/mig's MIG models that share a number of compute
// slices (7 on A100 and Hopper, 4 on A30 and RTX PRO 6000): a share is
// slices over that total, and PromQL selects the group's GPUs by their
// model label.
type SliceGroup struct {
	Total    int
	Slices   []int    // the compute slice counts of the group's profiles
	Patterns []string // the models' product-name patterns
}

// SliceGroups groups internal/mig's catalog by total compute slices. A
// product name matching patterns of two groups would be excluded from
// both (see ModelIn); internal/mig's table test keeps the real names
// unambiguous.
var SliceGroups = func() []SliceGroup {
	var out []SliceGroup
	for _, m := range mig.Models() {
		i := slices.IndexFunc(out, func(g SliceGroup) bool { return g.Total == m.ComputeSlices })
		if i < 0 {
			out = append(out, SliceGroup{Total: m.ComputeSlices})
			i = len(out) - 1
		}
		g := &out[i]
		g.Patterns = append(g.Patterns, m.Pattern)
		for _, p := range m.Profiles {
			if !slices.Contains(g.Slices, p.ComputeSlices) {
				g.Slices = append(g.Slices, p.ComputeSlices)
			}
		}
		slices.Sort(g.Slices)
	}
	return out
}()

// AllSlices are the compute slice counts GPU instance profile names start
// with ("3g.40gb" holds 3), over every model of the catalog.
func AllSlices() []int {
	var out []int
	for _, g := range SliceGroups {
		for _, n := range g.Slices {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ProfileSlices matches, on the profile label named label, the GPU
// instance profiles of n compute slices ("3g.40gb", "3g.48gb+me").
func ProfileSlices(label string, n int) string { return fmt.Sprintf(`%s=~"%dg[.].*"`, label, n) }

// anyOf is a PromQL regex (fully anchored by PromQL, case-insensitive)
// matching a name that contains any of the patterns.
func anyOf(patterns []string) string {
	return strconv.Quote("(?i).*(?:" + strings.Join(patterns, "|") + ").*")
}

// ModelIn selects, on the model label named label, the GPUs of g's models
// and of no other group's.
func ModelIn(label string, g SliceGroup) string {
	var others []string
	for _, o := range SliceGroups {
		if o.Total != g.Total {
			others = append(others, o.Patterns...)
		}
	}
	m := label + "=~" + anyOf(g.Patterns)
	if len(others) > 0 {
		m += ", " + label + "!~" + anyOf(others)
	}
	return m
}

// UnknownModel selects, on label, the GPUs of models the catalog lacks.
func UnknownModel(label string) string {
	var all []string
	for _, g := range SliceGroups {
		all = append(all, g.Patterns...)
	}
	return label + "!~" + anyOf(all)
}

// MIGTotal is, per GPU (by), the compute slices of its model: of the
// series sel selects, normalised, with the extra matcher it is given (the
// model's, on the exporter's label called label), any one per GPU. A model
// the catalog lacks has no series: what depends on it is unknown rather
// than divided by a guess. sel should narrow the selection to the GPUs
// that may be in MIG mode: the engine evaluates a divisor at every step
// even where the dividend is empty, so leaving out the GPUs known not to
// be keeps a fleet of whole GPUs from paying for it.
func MIGTotal(sel func(matchers string) string, label string, by ...string) string {
	var parts []string
	for _, g := range SliceGroups {
		parts = append(parts, fmt.Sprintf("0 * %s + %d", sel(ModelIn(label, g)), g.Total))
	}
	return "max by " + By(by...) + " (" + Union(parts...) + ")"
}
