package report

import (
	"fmt"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
)

// maxAbsentRows is how many absent GPUs the coverage section names before
// "and K more"; the JSON has them all.
const maxAbsentRows = 10

func absentGPUs(res *fleet.Result) []AbsentGPU {
	var out []AbsentGPU
	for _, a := range res.Absent() {
		out = append(out, AbsentGPU{Cluster: a.Cluster, Node: a.Node, UUID: a.UUID, Model: a.Model,
			LastSeen: a.LastSeen.UTC(), AbsentHours: a.For.Hours(), NodeGPUsReporting: a.Reporting})
	}
	return out
}

// absentRows says, for each GPU gone before the window's end, since when
// and for how long: its coverage figure alone would read as a GPU that
// reported most of the window, not as one missing at its end.
func absentRows(gpus []AbsentGPU) [][]string {
	var rows [][]string
	for i, g := range gpus {
		if i == maxAbsentRows {
			rows = append(rows, []string{"GPU absent at the end", fmt.Sprintf("and %d more (the JSON's coverage.absent_gpus)", len(gpus)-i)})
			break
		}
		node := g.Node
		if g.Cluster != "" {
			node = g.Cluster + "/" + g.Node
		}
		rows = append(rows, []string{"GPU absent at the end", fmt.Sprintf("%s on %s: last seen %s, absent the window's last %.1f h while %d other GPU(s) of the node reported",
			g.UUID, node, g.LastSeen.Format(time.RFC3339), g.AbsentHours, g.NodeGPUsReporting)})
	}
	return rows
}
