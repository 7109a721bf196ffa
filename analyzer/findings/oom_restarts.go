package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// A shared GPU's memory tells that it ran out, not which tenant did: with
// dcgm-exporter's copies every tenant shows the device's figure, and a
// tenant that dies frees what it held. Kubernetes names it: the tenant
// whose container restarted (kube-state-metrics' restart counter) while
// the GPU's memory was at its size, by the OOM-risk finding's warning
// ratio, is the one that ran out. A CUDA out-of-memory error ends the
// process with exit code 1, which the kubelet gives as reason Error;
// OOMKilled is the container's host memory limit, not the GPU's.

// oomDeaths are one tenant's restarts with its GPU full; alloc indexes
// d.res.Allocations.
type oomDeaths struct {
	alloc    int
	restarts []fleet.Restart
}

// ranOut is the tenant of g that died with g's memory (dev bytes) full,
// the most often, and whether there is one. A co-tenant that restarted
// while the GPU had room is not it, nor one whose every known end was for
// another reason than Error.
func (d *detector) ranOut(g fleet.GPU, dev float64) (oomDeaths, bool) {
	var best oomDeaths
	found := false
	for i, a := range d.res.Allocations {
		if a.Node != g.Node || a.UUID != g.UUID || len(a.Restarts) == 0 {
			continue
		}
		if t := a.Terminated; t != nil && len(t.Reasons) > 0 && !slices.Contains(t.Reasons, "Error") {
			continue
		}
		var full []fleet.Restart
		for _, r := range a.Restarts {
			if r.GPUMemoryBytes >= d.cfg.OOMRisk.WarningRatio*dev {
				full = append(full, r)
			}
		}
		if len(full) == 0 {
			continue
		}
		c := oomDeaths{alloc: i, restarts: full}
		if !found || cmp.Or(cmp.Compare(len(c.restarts), len(best.restarts)),
			full[len(full)-1].Time.Compare(best.restarts[len(best.restarts)-1].Time)) > 0 {
			best, found = c, true
		}
	}
	return best, found
}

// shownDeaths is how many restarts a summary lists: a crash loop's
// hundreds are counted, not listed.
const shownDeaths = 3

// deathsClause says who ran out, when, and with how much on the GPU.
func (d *detector) deathsClause(o oomDeaths, dev float64) string {
	a := d.res.Allocations[o.alloc]
	var at []string
	day := ""
	for _, r := range o.restarts[:min(len(o.restarts), shownDeaths)] {
		t := r.Time.UTC()
		s := t.Format("15:04")
		if t.Format(time.DateOnly) != day {
			day = t.Format(time.DateOnly)
			s = day + " " + s
		}
		at = append(at, fmt.Sprintf("%s UTC (the GPU at %s of %s just before)", s, gib(r.GPUMemoryBytes), gib(dev)))
	}
	if more := len(o.restarts) - shownDeaths; more > 0 {
		at = append(at, fmt.Sprintf("%d more time(s)", more))
	}
	end := ""
	if t := a.Terminated; t != nil {
		var what []string
		if len(t.Reasons) > 0 {
			what = append(what, strings.Join(t.Reasons, ", "))
		}
		if t.HasExitCode {
			what = append(what, fmt.Sprintf("exit code %d", t.ExitCode))
		}
		if len(what) > 0 {
			end = "; it ended with " + strings.Join(what, ", ")
		}
	}
	return fmt.Sprintf(" (kube-state-metrics: %s/%s's container %s restarted at %s%s: it is the tenant that ran out of GPU memory)",
		a.Namespace, a.Pod, a.Container, strings.Join(at, " and "), end)
}
