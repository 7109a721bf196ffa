package query

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// maxStaleNamed is how many nodes whose data stopped staleNote names
// before "and K more".
const maxStaleNamed = 5

// staleNote says where the data stops before the window's end
// (fleet.Result.Stale): which nodes, and when each was last seen; empty
// when the data reaches it. The report carries it among its notes, so
// every format says it.
func staleNote(res *fleet.Result) string {
	stale := res.Stale()
	if len(stale) == 0 {
		return ""
	}
	end := res.Window.LastStep()
	var names []string
	for _, n := range stale[:min(len(stale), maxStaleNamed)] {
		names = append(names, fmt.Sprintf("%s last seen %s (%s before)", nodeName(n.NodeRef), n.LastSeen.UTC().Format(time.RFC3339), n.SinceLastSeen))
	}
	if len(stale) > maxStaleNamed {
		names = append(names, fmt.Sprintf("%d more", len(stale)-maxStaleNamed))
	}
	all := len(res.NodesSeen())
	which := fmt.Sprintf("the data of %d of %d nodes stops", len(stale), all)
	if len(stale) == all {
		which = "the data stops"
	}
	return fmt.Sprintf("%s more than %s before the window's end (%s): %s; what held their GPUs is judged at their last sample, "+
		"and no node is advised to scale down on data that stopped (is the exporter scraped, is Prometheus up, or was the store read after its last sample?)",
		which, fleet.StaleAfter, end.UTC().Format(time.RFC3339), strings.Join(names, ", "))
}

func nodeName(n fleet.NodeRef) string {
	if n.Cluster == "" {
		return n.Node
	}
	return n.Cluster + "/" + n.Node
}
