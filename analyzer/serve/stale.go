package serve

import (
	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
)

// keepStale is the advice to serve from res: its findings, except on the
// nodes whose data stops before the window's end (Result.Stale), which
// keep the findings served before for them. What holds such a node's GPUs
// now is not in the data, so the new analysis cannot judge it (it says
// so, and advises no scale-down); the last advice judged on current data
// stands until the node's data comes back, as the last good analysis
// stands while analyses fail. With nothing served yet, res's findings
// are served as they are.
func (s *Service) keepStale(res *Result) []findings.Finding {
	prev := s.current.Load()
	if len(res.Stale) == 0 || prev == nil {
		return res.Findings
	}
	stale := make(map[fleet.NodeRef]bool, len(res.Stale))
	for _, n := range res.Stale {
		stale[n] = true
	}
	of := func(f findings.Finding) bool {
		return f.Node != "" && stale[fleet.NodeRef{Cluster: f.Cluster, Node: f.Node}]
	}
	var out []findings.Finding
	kept := 0
	for _, f := range prev.advice {
		if of(f) {
			out = append(out, f)
			kept++
		}
	}
	for _, f := range res.Findings {
		if !of(f) {
			out = append(out, f)
		}
	}
	s.o.Logger.Warn("the data of some nodes stops before the window's end; serving their previous findings",
		"nodes", len(res.Stale), "kept", kept)
	return out
}
