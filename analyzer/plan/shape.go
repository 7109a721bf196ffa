package plan

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

// LabelInstanceType is the node label that names a node's cloud instance
// type, which clouds bill by.
const LabelInstanceType = "node.kubernetes.io/instance-type"

// ShapeFromNodes sets each pool's node shape from the cluster's nodes: the
// GPUs of a node (GPU Feature Discovery's nvidia.com/gpu.count) where the
// metrics showed none, and the pool's instance type, the most common among
// the nodes whose nvidia.com/gpu.product is the pool's model.
func ShapeFromNodes(pools []*Pool, nodes map[string]inventory.Node) {
	for _, p := range pools {
		product := strings.ReplaceAll(p.Product, " ", "-")
		types := map[string]int{}
		count, n := 0, 0
		for _, node := range nodes {
			if node.Product != product {
				continue
			}
			n++
			count = max(count, node.Count)
			if it := node.Labels[LabelInstanceType]; it != "" {
				types[it]++
			}
		}
		if p.GPUsPerNode == 0 && count > 0 {
			p.GPUsPerNode = count
			if p.Nodes == 0 {
				p.Nodes = n
			}
		}
		if len(types) > 0 {
			p.InstanceType = slices.MaxFunc(slices.Sorted(maps.Keys(types)), func(a, b string) int {
				return cmp.Or(cmp.Compare(types[a], types[b]), strings.Compare(b, a))
			})
		}
	}
}
