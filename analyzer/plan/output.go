package plan

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/internal/safetext"
	"github.com/gpulens/gpulens/internal/termtable"
	"github.com/gpulens/gpulens/vocab"
)

// Formats are what Write accepts: wide is the table with its long
// columns and every line whole, as kubectl's -o wide.
var Formats = []string{"table", "wide", "json", "yaml"}

// Write renders p as table, json or yaml.
func Write(w io.Writer, p *Plan, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	case "yaml":
		return writeYAML(w, p)
	case "table", "wide":
		return writeTable(w, p, format == "wide")
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

func money(v *float64) string {
	if v == nil {
		return "unknown price"
	}
	// Whole dollars in groups of three, as the report writes them.
	sign, d := "", int64(math.Round(*v))
	if d < 0 {
		sign, d = "-", -d
	}
	digits := strconv.FormatInt(d, 10)
	for i := len(digits) - 3; i > 0; i -= 3 {
		digits = digits[:i] + "," + digits[i:]
	}
	return sign + "$" + digits
}

// writeTable writes the plan for a terminal, within 120 columns
// (termtable.Width) unless wide: the method and the contended steps are
// -o wide's columns, layouts and workload lists are wrapped in their
// cells, notes at 120. Cells and lines hold the store's text (clusters,
// models, nodes, lanes): termtable escapes each before it wraps it, so no
// control character reaches the terminal and a value never starts a line.
func writeTable(w io.Writer, p *Plan, wide bool) error {
	prose := func(prefix, indent, text string) { _ = termtable.Prose(w, prefix, indent, text, wide) }
	prose("", "  ", fmt.Sprintf("Consolidation plan for %s – %s (%d steps of %s). Memory fits with a %.0f%% margin at every step; shared GPUs and slices carry their p95 load under %.0f%%; at most %d time-slicing replicas.",
		p.Start.UTC().Format("2006-01-02 15:04"), p.End.UTC().Format("2006-01-02 15:04 MST"), stepsOf(p), p.Step,
		100*p.Policy.MemoryMargin, 100*p.Policy.ComputeTarget, p.Policy.MaxReplicas))
	fmt.Fprintln(w)
	// withCluster puts the cluster column first, where the plan is of
	// several clusters.
	clustered := p.clustered()
	withCluster := func(cluster string, cells ...string) []string {
		if !clustered {
			return cells
		}
		return append([]string{cluster}, cells...)
	}
	var clusterCol []termtable.Column
	if clustered {
		clusterCol = []termtable.Column{{Name: "Cluster"}}
		prose("", "  ", fmt.Sprintf("Each cluster is planned apart: a workload moves only among its own cluster's nodes (clusters %s).", strings.Join(p.Clusters, ", ")))
		fmt.Fprintln(w)
	}
	tb := termtable.New(append(clusterCol, termtable.Column{Name: "Model"}, termtable.Column{Name: "Nodes today"}, termtable.Column{Name: "Needed"},
		termtable.Column{Name: "GPUs today"}, termtable.Column{Name: "Needed"}, termtable.Column{Name: "Headroom GPUs"}, termtable.Column{Name: "Saving/month"},
		termtable.Column{Name: "Method", Wide: true})...)
	for _, pp := range p.Pools {
		needed := count(pp.NodesNeeded)
		if pp.NodesToday > 0 && pp.NodesNeeded == 0 {
			needed = "0" // every lane released: its nodes all go
		}
		tb.Row(withCluster(clusterCell(pp.Cluster), pp.Model, count(pp.NodesToday), needed, fmt.Sprint(pp.GPUsToday), fmt.Sprint(pp.GPUsNeeded),
			fmt.Sprint(pp.HeadroomGPUs), money(pp.MonthlySavingUSD), pp.Method)...)
	}
	total := p.MonthlySavingUSD
	tb.Row(withCluster("", "TOTAL", count(p.NodesToday), count(p.NodesNeeded), fmt.Sprint(p.GPUsToday), fmt.Sprint(p.GPUsNeeded), fmt.Sprint(p.HeadroomGPUs), money(&total), "")...)
	if err := tb.Write(w, wide); err != nil {
		return err
	}
	freed := p.CapacityFreedMonthlyUSD
	fmt.Fprintln(w)
	prose("", "  ", fmt.Sprintf("Banked when the freed nodes go: %s a month (their price: clouds bill nodes). Capacity freed for other work: %s on the nodes that stay, worth %s a month, which leaves the bill only when a node goes.",
		money(&total), gpus(p.CapacityFreedGPUs), money(&freed)))
	switch {
	case p.AsIs:
		prose("", "  ", "Today's fleet as it is (--as-is): the workloads 'gpulens recommend' releases are planned too.")
	case len(p.Released) == 0:
		prose("", "  ", "The fleet after the advice: 'gpulens recommend' releases no workload, so it is today's.")
	default:
		prose("", "  ", fmt.Sprintf("The fleet after the advice: %s that 'gpulens recommend' releases %s not planned (--as-is plans today's fleet).",
			plural(len(p.Released), "lane"), map[bool]string{true: "is", false: "are"}[len(p.Released) == 1]))
	}

	for _, pp := range p.Pools {
		nodes := ""
		if pp.NodesNeeded > 0 {
			nodes = fmt.Sprintf(" on %s of %d GPUs (%d today)", plural(pp.NodesNeeded, "node"), pp.GPUsPerNode, pp.NodesToday)
			switch {
			case pp.KeepsToday:
				nodes += "; today's layout, kept"
				if n := moves(pp); n > 0 {
					nodes += fmt.Sprintf(", but for %s that moves to a GPU of its own (the notes say which)", plural(n, "lane"))
					if n > 1 {
						nodes = strings.Replace(nodes, "that moves", "that move", 1)
					}
				}
			case pp.NodesNeeded > pp.NodesToday:
				nodes += fmt.Sprintf("; more nodes than today, since %s did not fit today's layout (the notes say why)", plural(len(pp.DidNotFit), "lane"))
			}
		}
		fmt.Fprintln(w)
		prose("", "  ", fmt.Sprintf("%s: %s%s", p.title(pp), gpus(pp.GPUsNeeded), nodes))
		nodeOf := map[int]string{}
		for _, n := range pp.Nodes {
			for _, g := range n.GPUs {
				nodeOf[g] = cmp.Or(n.Name, fmt.Sprint(n.Index))
			}
		}
		gt := termtable.New(termtable.Column{Name: "Node"}, termtable.Column{Name: "GPU"}, termtable.Column{Name: "Layout", Wrap: true},
			termtable.Column{Name: "Peak memory"}, termtable.Column{Name: "Peak load"}, termtable.Column{Name: "Contended steps", Wide: true},
			termtable.Column{Name: "Workloads", Wrap: true})
		gt.Indent = "  "
		for i, g := range pp.GPUs {
			r := pp.Replay.GPUs[i]
			gt.Row(cmp.Or(nodeOf[i], "-"), fmt.Sprint(g.Index), g.Layout(), fmt.Sprintf("%.0f%%", 100*r.PeakMemoryRatio), fmt.Sprintf("%.0f%%", 100*r.PeakLoad),
				fmt.Sprint(r.ContendedSteps), strings.Join(g.Lanes, ", "))
		}
		if err := gt.Write(w, wide); err != nil {
			return err
		}
		prose("  ", "    ", fmt.Sprintf("Replay: %d steps on %s, %d overcommitted memory steps; %s with contended steps (summed load above the GPU, or a slice's load above the slice).",
			pp.Replay.Steps, gpus(len(pp.GPUs)), pp.Replay.OvercommittedSteps, gpus(pp.Replay.ContendedGPUs())))
		for _, n := range pp.Notes {
			prose("  Note: ", "        ", n)
		}
	}

	fmt.Fprintln(w, "\nWhere each workload goes:")
	at := termtable.New(append(clusterCol, termtable.Column{Name: "Workload"}, termtable.Column{Name: "From"}, termtable.Column{Name: "To"},
		termtable.Column{Name: "GPU"}, termtable.Column{Name: "Peak memory"}, termtable.Column{Name: "P95 load"}, termtable.Column{Name: "", Wrap: true})...)
	at.Indent = "  "
	for _, pp := range p.Pools {
		for _, a := range pp.Assignments {
			to := string(a.Mode)
			if a.Slice != "" {
				to = "mig " + a.Slice
			}
			extra := ""
			if a.Training {
				extra = "training-like"
			}
			if a.GrowthBytes > 0 {
				extra = strings.TrimPrefix(extra+fmt.Sprintf(", grows +%.1f GiB", a.GrowthBytes/(1<<30)), ", ")
			}
			at.Row(withCluster(clusterCell(pp.Cluster), a.Lane, fromOf(a), to, fmt.Sprintf("%s/%d", pp.Model, a.GPU), fmt.Sprintf("%.1f GiB", a.PeakMemoryBytes/(1<<30)),
				fmt.Sprintf("%.0f%%", 100*a.P95Load), extra)...)
		}
	}
	if err := at.Write(w, wide); err != nil {
		return err
	}
	for _, n := range p.Notes {
		prose("Note: ", "      ", n)
	}
	return nil
}

// moves counts the lanes that a pool keeping today's layout moves.
func moves(pp PoolPlan) int {
	n := 0
	for _, a := range pp.Assignments {
		if a.Moved {
			n++
		}
	}
	return n
}

// count writes 0 (unknown) as "-".
func count(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func stepsOf(p *Plan) int {
	for _, pp := range p.Pools {
		if pp.Replay.Steps > 0 {
			return pp.Replay.Steps
		}
	}
	return 0
}

// nodeGroup is the GPUs of one pool that share a layout, and so one
// device plugin (or MIG manager) configuration.
type nodeGroup struct {
	// title names the pool in comments (its cluster too, in a plan of
	// several); model names the group's configs.
	title, model, layout string
	gpu                  GPU
	count                int
	// dra are the group's lanes whose pods get their GPU through a DRA
	// ResourceClaim.
	dra []string
}

// writeYAML writes one document per node group with the device plugin's
// sharing config (or mig-parted's geometry), then one strategic-merge
// patch per workload, as 'recommend -o yaml' does.
func writeYAML(w io.Writer, p *Plan) error {
	t := &textEmitter{w: w}
	emitChanges(p, t)
	if t.n == 0 {
		fmt.Fprintln(w, "# Nothing to plan.")
	}
	return nil
}

// emitChanges says p's changes to e, one document at a time: the node
// groups' configs, then the workloads' patches.
func emitChanges(p *Plan, e emitter) {
	for _, pp := range p.Pools {
		if pp.Nodes != nil {
			writeNodesYAML(e, pp, p.title(pp))
			continue
		}
		var groups []*nodeGroup
		for _, g := range pp.GPUs {
			k := slices.IndexFunc(groups, func(x *nodeGroup) bool { return x.layout == g.Layout() })
			if k < 0 {
				groups = append(groups, &nodeGroup{title: p.title(pp), model: pp.Model, layout: g.Layout(), gpu: g})
				k = len(groups) - 1
			}
			groups[k].count++
			groups[k].dra = append(groups[k].dra, g.DRALanes...)
		}
		for _, g := range groups {
			name := strings.ToLower(g.model) + "-" + g.layout
			// Said in each group's own document, after e.doc(pp.Cluster).
			draNote := func() {
				if len(g.dra) > 0 {
					e.note("# Node group %s: %s", name, draLabelsNote(g.dra))
				}
			}
			switch g.gpu.Mode {
			case ModeWhole:
				e.doc(pp.Cluster)
				draNote()
				e.note("# Node group %s: %s %s, whole: the device plugin's default config, nothing to roll out.", name, gpus(g.count), g.title)
				e.note("# Label: nvidia.com/device-plugin.config=default")
				e.empty()
			case ModeTimeSlicing:
				e.doc(pp.Cluster)
				draNote()
				e.note("# Node group %s: %s %s, each time-sliced into %d replicas.", name, gpus(g.count), g.title, g.gpu.Replicas)
				e.note("# Add under the device plugin's config map as %q and label the nodes nvidia.com/device-plugin.config=%s", name, name)
				e.devicePluginConfig(name, map[string]any{"version": "v1", "sharing": map[string]any{"timeSlicing": map[string]any{
					"renameByDefault": true, "failRequestsGreaterThanOne": true,
					"resources": []any{map[string]any{"name": vocab.ResourceGPU, "replicas": g.gpu.Replicas}}}}})
			case ModeMIG:
				e.doc(pp.Cluster)
				draNote()
				counts := map[string]int{}
				for _, s := range g.gpu.Slices {
					counts[s]++
				}
				e.note("# Node group %s: %s %s with MIG slices %s (mixed strategy).", name, gpus(g.count), g.title, strings.Join(g.gpu.Slices, ", "))
				e.note("# Add to the MIG manager's mig-parted config and label the nodes nvidia.com/mig.config=%s", name)
				e.migConfig(name, map[string]any{"version": "v1", "mig-configs": map[string]any{name: []any{
					map[string]any{"devices": "all", "mig-enabled": true, "mig-devices": counts}}}})
			}
		}
	}
	seen := map[workload.Ref]bool{}
	for _, pp := range p.Pools {
		for _, a := range pp.Assignments {
			if pp.KeepsToday && !a.Moved {
				continue // it keeps its request
			}
			if seen[a.Workload] {
				continue
			}
			seen[a.Workload] = true
			if a.AllocationPath == vocab.AllocationPathDRA {
				e.doc(pp.Cluster)
				writeDRAAssignment(e, p.title(pp), a)
				continue
			}
			remove := []vocab.Resource{vocab.ResourceGPU, vocab.ResourceGPUShared}
			if prof, ok := strings.CutPrefix(a.From, "mig "); ok {
				remove = append(remove, vocab.MIGResource(prof))
			}
			change := recommend.PatchChange{Limits: map[vocab.Resource]int64{a.Resource: 1}, Remove: remove}
			patch := recommend.BuildPatch(a.Workload, change)
			e.doc(pp.Cluster)
			e.note("# %s: %s → %s (%s GPU %d)", a.Workload, a.From, a.Resource, p.title(pp), a.GPU)
			if patch == nil {
				e.note("# %s", recommend.ContainerUnknown(a.Workload, change))
				e.empty()
				continue
			}
			if a.Workload.Kind == "Pod" {
				e.note("# %s/%s has no controller gpulens knows of; pods cannot be patched in place: apply this to the spec that creates it", a.Workload.Namespace, a.Workload.Name)
			} else {
				e.note("# kubectl -n %s patch %s --type strategic --patch-file <this document>", safetext.ShellArg(a.Workload.Namespace), safetext.ShellObject(strings.ToLower(a.Workload.Kind), a.Workload.Name))
			}
			e.patch(patch)
		}
	}
}

// title names a pool in the plan's text: its model, and its cluster in a
// plan of several.
func (p *Plan) title(pp PoolPlan) string {
	if !p.clustered() {
		return pp.Model
	}
	return pp.Model + " of " + fleet.ClusterName(pp.Cluster)
}

// fromOf is where a lane comes from, for tables: its GPU resource, and
// the DRA path where its pods got it through a claim.
func fromOf(a Assignment) string {
	if a.AllocationPath == vocab.AllocationPathDRA {
		return a.From + " (dra)"
	}
	return a.From
}

// draLabelsNote says, above a node group or node that would hold lanes
// allocated through DRA, that its node labels do not configure them.
func draLabelsNote(lanes []string) string {
	verb := "gets its GPU"
	if len(lanes) > 1 {
		verb = "get their GPUs"
	}
	return fmt.Sprintf("%s (%s) %s through DRA ResourceClaims. The NVIDIA DRA driver (gpu.nvidia.com), not the device plugin, "+
		"hands out a GPU it manages: nvidia.com/device-plugin.config and nvidia.com/mig.config do not configure it, "+
		"the claims' device class, MIG profile and sharing config do, and it cannot also take the device plugin's tenants.",
		plural(len(lanes), "lane"), strings.Join(lanes, ", "), verb)
}

// writeDRAAssignment writes, for a workload whose pods get their GPU
// through a DRA ResourceClaim, what to request instead of a limits patch:
// the device plugin's resources are not how it got the GPU.
func writeDRAAssignment(e emitter, model string, a Assignment) {
	want := "a whole GPU (device class " + dra.ClassGPU + ")"
	switch a.Mode {
	case ModeTimeSlicing:
		want = "a GPU shared by time-slicing (device class " + dra.ClassGPU + ", a claim config with sharing strategy TimeSlicing)"
	case ModeMIG:
		want = "a " + a.Slice + " MIG device (device class " + dra.ClassMIG + ", profile " + a.Slice + ")"
	}
	e.note("# %s: %s through DRA (%s) → %s (%s GPU %d)", a.Workload, a.From, strings.Join(a.Claims, ", "), want, model, a.GPU)
	e.note("# No limits patch: its pods get the GPU from a ResourceClaim. Request %s in a new ResourceClaimTemplate "+
		"(a template's spec is immutable) and point the pod template's resourceClaims at it, or, for a claim its pods share by name, "+
		"in a new ResourceClaim; 'gpulens recommend -o yaml' writes the template and the patch where it can read the claims.", want)
}

func writeYAMLDoc(w io.Writer, v any) {
	b, err := yaml.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("plan yaml: %v", err)) // maps of strings, ints and bools always marshal
	}
	_, _ = w.Write(b)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func gpus(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}
