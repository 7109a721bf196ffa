package signals

import (
	"fmt"
	"strings"
)

// ClusterValues is, per value of the store's cluster label, a series
// wherever any of the metrics names was sampled in the trailing range rng:
// at each instant of a subquery at step, last_over_time over the tile
// since the one before, and the range's end on its own (the last aligned
// instant may fall before it). It reads every sample of those metrics
// once, a tile at a time, so it cannot miss a cluster.
func ClusterValues(label string, names []string, rng, step string) string {
	tile := CountBy([]string{label}, fmt.Sprintf(`last_over_time({__name__=~%q}[%s])`, strings.Join(names, "|"), step))
	return Subquery(MaxOverTime, tile, rng, step) + " or " + tile
}
