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
	"text/tabwriter"

	"gopkg.in/yaml.v3"

	"github.com/gpulens/gpulens/analyzer/dra"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
	"github.com/gpulens/gpulens/internal/safetext"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// Formats are what Write accepts.
var Formats = []string{"table", "json", "yaml"}

// Write renders p as table, json or yaml.
func Write(w io.Writer, p *Plan, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	case "yaml":
		return writeYAML(w, p)
	case "table":
		return writeTable(w, p)
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

func writeTable(w io.Writer, p *Plan) error {
	fmt.Fprintf(w, "Consolidation plan for %s – %s (%d steps of %s). Memory fits with a %.0f%% margin at every step; shared GPUs and slices carry their p95 load under %.0f%%; at most %d time-slicing replicas.\n\n",
		p.Start.UTC().Format("2006-01-02 15:04"), p.End.UTC().Format("2006-01-02 15:04 MST"), stepsOf(p), p.Step,
		100*p.Policy.MemoryMargin, 100*p.Policy.ComputeTarget, p.Policy.MaxReplicas)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// col is the cluster column, where the plan is of several clusters.
	// Cells and lines hold the store's text (clusters, models, nodes,
	// lanes): each goes through safetext (cell, safetext.Line), so no
	// control character reaches the terminal and a row stays one row.
	cell := safetext.Cell
	col := func(c string) string { return "" }
	if p.clustered() {
		col = func(c string) string { return cell(c) + "\t" }
		fmt.Fprintln(w, safetext.Line(fmt.Sprintf("Each cluster is planned apart: a workload moves only among its own cluster's nodes (clusters %s).", strings.Join(p.Clusters, ", ")))+"\n")
	}
	fmt.Fprintln(tw, col("CLUSTER")+"MODEL\tNODES TODAY\tNEEDED\tGPUS TODAY\tNEEDED\tHEADROOM GPUS\tSAVING/MONTH\tMETHOD")
	for _, pp := range p.Pools {
		needed := count(pp.NodesNeeded)
		if pp.NodesToday > 0 && pp.NodesNeeded == 0 {
			needed = "0" // every lane released: its nodes all go
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\n", col(clusterCell(pp.Cluster)), cell(pp.Model), count(pp.NodesToday), needed, pp.GPUsToday, pp.GPUsNeeded,
			pp.HeadroomGPUs, money(pp.MonthlySavingUSD), pp.Method)
	}
	total := p.MonthlySavingUSD
	fmt.Fprintf(tw, "%sTOTAL\t%s\t%s\t%d\t%d\t%d\t%s\t\n", col(""), count(p.NodesToday), count(p.NodesNeeded), p.GPUsToday, p.GPUsNeeded, p.HeadroomGPUs, money(&total))
	if err := tw.Flush(); err != nil {
		return err
	}
	freed := p.CapacityFreedMonthlyUSD
	fmt.Fprintf(w, "\nBanked when the freed nodes go: %s a month (their price: clouds bill nodes). Capacity freed for other work: %s on the nodes that stay, worth %s a month, which leaves the bill only when a node goes.\n",
		money(&total), gpus(p.CapacityFreedGPUs), money(&freed))
	if p.AsIs {
		fmt.Fprintln(w, "Today's fleet as it is (--as-is): the workloads 'gpulens recommend' releases are planned too.")
	} else if len(p.Released) == 0 {
		fmt.Fprintln(w, "The fleet after the advice: 'gpulens recommend' releases no workload, so it is today's.")
	} else {
		fmt.Fprintf(w, "The fleet after the advice: %s that 'gpulens recommend' releases %s not planned (--as-is plans today's fleet).\n",
			plural(len(p.Released), "lane"), map[bool]string{true: "is", false: "are"}[len(p.Released) == 1])
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
		fmt.Fprintf(w, "\n%s\n", safetext.Line(fmt.Sprintf("%s: %s%s", p.title(pp), gpus(pp.GPUsNeeded), nodes)))
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		nodeOf := map[int]string{}
		for _, n := range pp.Nodes {
			for _, g := range n.GPUs {
				nodeOf[g] = cmp.Or(n.Name, fmt.Sprint(n.Index))
			}
		}
		fmt.Fprintln(tw, "  NODE\tGPU\tLAYOUT\tPEAK MEMORY\tPEAK LOAD\tCONTENDED STEPS\tWORKLOADS")
		for i, g := range pp.GPUs {
			r := pp.Replay.GPUs[i]
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%.0f%%\t%.0f%%\t%d\t%s\n", cell(cmp.Or(nodeOf[i], "-")), g.Index, cell(g.Layout()), 100*r.PeakMemoryRatio, 100*r.PeakLoad, r.ContendedSteps, cell(strings.Join(g.Lanes, ", ")))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "  Replay: %d steps on %s, %d overcommitted memory steps; %s with contended steps (summed load above the GPU, or a slice's load above the slice).\n",
			pp.Replay.Steps, gpus(len(pp.GPUs)), pp.Replay.OvercommittedSteps, gpus(pp.Replay.ContendedGPUs()))
		for _, n := range pp.Notes {
			fmt.Fprintf(w, "  Note: %s\n", safetext.Line(n))
		}
	}

	fmt.Fprintln(w, "\nWhere each workload goes:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  "+col("CLUSTER")+"WORKLOAD\tFROM\tTO\tGPU\tPEAK MEMORY\tP95 LOAD\t")
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
			fmt.Fprintf(tw, "  %s%s\t%s\t%s\t%s/%d\t%.1f GiB\t%.0f%%\t%s\n", col(clusterCell(pp.Cluster)), cell(a.Lane), cell(fromOf(a)), cell(to), cell(pp.Model), a.GPU, a.PeakMemoryBytes/(1<<30), 100*a.P95Load, extra)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range p.Notes {
		fmt.Fprintf(w, "Note: %s\n", safetext.Line(n))
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
			if a.AllocationPath == signals.AllocationPathDRA {
				e.doc(pp.Cluster)
				writeDRAAssignment(e, p.title(pp), a)
				continue
			}
			remove := []string{vocab.ResourceGPU, vocab.ResourceGPUShared}
			if strings.HasPrefix(a.From, "mig ") {
				remove = append(remove, vocab.ResourceMIGPrefix+strings.TrimPrefix(a.From, "mig "))
			}
			change := recommend.PatchChange{Limits: map[string]int64{a.Resource: 1}, Remove: remove}
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
	if a.AllocationPath == signals.AllocationPathDRA {
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
