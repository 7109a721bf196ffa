package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/vocab"
)

// writeNodesYAML writes a pool's node plan: which labels each node gets,
// then each time-slicing config for the device plugin's config map and each
// node's MIG geometry for the MIG manager (mig-parted), one document each.
func writeNodesYAML(e emitter, pp PoolPlan, title string) {
	prefix := strings.ToLower(pp.Model) + "-"
	migName := func(n Node) string { return fmt.Sprintf("%snode-%d", prefix, n.Index) }
	e.doc(pp.Cluster)
	if pp.KeepsToday {
		var moved []string
		for _, a := range pp.Assignments {
			if a.Moved {
				moved = append(moved, a.Lane)
			}
		}
		what := "no workload request changes"
		if len(moved) > 0 {
			what = fmt.Sprintf("no other workload request changes than the patch below of %s, which moves to a GPU of its own", strings.Join(moved, ", "))
		}
		e.note("# Pool %s keeps today's layout, %s of %d GPUs (%d today): no node label, device plugin config or MIG geometry changes, and %s.",
			title, plural(pp.NodesNeeded, "node"), pp.GPUsPerNode, pp.NodesToday, what)
		e.empty()
		return
	}
	e.note("# Pool %s: %s of %d GPUs (%d today). Label each node:", title, plural(pp.NodesNeeded, "node"), pp.GPUsPerNode, pp.NodesToday)
	for _, n := range pp.Nodes {
		cfg := n.Config
		if cfg != "default" {
			cfg = prefix + cfg
		}
		labels := vocab.LabelPluginConfig + "=" + cfg
		if n.HasMIG(pp.GPUs) {
			labels += " nvidia.com/mig.config=" + migName(n)
		}
		e.note("#   node %d (planned GPUs %s): %s", n.Index, indexList(n.GPUs), labels)
		var dra []string
		for _, gi := range n.GPUs {
			dra = append(dra, pp.GPUs[gi].DRALanes...)
		}
		if len(dra) > 0 {
			e.note("#     on node %d, %s", n.Index, draLabelsNote(dra))
		}
	}
	e.empty()

	var replicas []int
	for _, n := range pp.Nodes {
		if n.Replicas > 0 && !slices.Contains(replicas, n.Replicas) {
			replicas = append(replicas, n.Replicas)
		}
	}
	slices.Sort(replicas)
	for _, r := range replicas {
		e.doc(pp.Cluster)
		name := fmt.Sprintf("%stime-slicing-%d", prefix, r)
		e.note("# Device plugin config %q: each GPU time-sliced into %d replicas. Add it to the device plugin's config map.", name, r)
		e.devicePluginConfig(name, map[string]any{"version": "v1", "sharing": map[string]any{"timeSlicing": map[string]any{
			"renameByDefault": true, "failRequestsGreaterThanOne": true,
			"resources": []any{map[string]any{"name": vocab.ResourceGPU, "replicas": r}}}}})
	}
	for _, n := range pp.Nodes {
		if !n.HasMIG(pp.GPUs) {
			continue
		}
		// The node's GPUs by their index on the node, MIG geometries
		// grouped: mig-parted applies one entry to several devices.
		var entries []any
		var plain []int
		geometry := map[string][]int{}
		counts := map[string]map[string]int{}
		for local, gi := range n.GPUs {
			g := pp.GPUs[gi]
			if g.Mode != ModeMIG {
				plain = append(plain, local)
				continue
			}
			key := strings.Join(g.Slices, ",")
			if counts[key] == nil {
				counts[key] = map[string]int{}
				for _, sl := range g.Slices {
					counts[key][sl]++
				}
			}
			geometry[key] = append(geometry[key], local)
		}
		for _, key := range slices.Sorted(maps.Keys(geometry)) {
			entries = append(entries, map[string]any{"devices": geometry[key], "mig-enabled": true, "mig-devices": counts[key]})
		}
		if len(plain) > 0 {
			entries = append(entries, map[string]any{"devices": plain, "mig-enabled": false})
		}
		e.doc(pp.Cluster)
		e.note("# MIG config %q for node %d (devices are the node's GPU indexes). Add it to the MIG manager's mig-parted config.", migName(n), n.Index)
		e.migConfig(migName(n), map[string]any{"version": "v1", "mig-configs": map[string]any{migName(n): entries}})
	}
}
