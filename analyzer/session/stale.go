package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// maxStaleLogged is how many nodes whose data stopped the warning names.
const maxStaleLogged = 10

// warnStale says on the log where the data stops before the window's end
// (fleet.Result.Stale), with the step each node was last seen at (up to
// the engine's 5m lookback after its last sample, where the store has no
// staleness markers): those nodes are judged at their last sample and
// none of them is advised to scale down, which a reader of the advice
// alone would not know. The report's notes say it too.
func (s *Session) warnStale(res *fleet.Result) {
	stale := res.Stale()
	if len(stale) == 0 {
		return
	}
	var names []string
	dataEnd := stale[len(stale)-1].LastSeen
	for i, n := range stale {
		dataEnd = later(dataEnd, n.LastSeen)
		if i < maxStaleLogged {
			name := n.Node
			if n.Cluster != "" {
				name = n.Cluster + "/" + n.Node
			}
			names = append(names, fmt.Sprintf("%s@%s", name, n.LastSeen.UTC().Format(time.RFC3339)))
		}
	}
	if len(stale) > maxStaleLogged {
		names = append(names, fmt.Sprintf("%d more", len(stale)-maxStaleLogged))
	}
	s.cfg.Logger.Warn("the data stops before the window's end: those nodes are judged at their last sample, and none is advised to scale down",
		"window_end", res.Window.LastStep().UTC().Format(time.RFC3339), "stale_nodes", len(stale), "nodes", len(res.NodesSeen()),
		"last_seen", dataEnd.UTC().Format(time.RFC3339), "stopped", strings.Join(names, ", "))
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
