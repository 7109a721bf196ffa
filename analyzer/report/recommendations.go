package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/internal/safetext"
	"github.com/gpulens/gpulens/internal/termtable"
	"github.com/gpulens/gpulens/vocab"
)

// RecommendFormats are the formats of 'gpulens recommend': table for
// people, json for scripts (every finding, the form /api/v1/findings
// serves), yaml for the patches alone, one YAML document per workload, csv
// for spreadsheets (one row per finding); wide is the table with its kind
// and confidence columns and every line whole, as kubectl's -o wide.
var RecommendFormats = []string{"table", "wide", "json", "yaml", "csv"}

// WriteRecommendations writes findings in one of RecommendFormats.
func WriteRecommendations(w io.Writer, fs []findings.Finding, format string) error {
	switch format {
	case "json":
		return WriteFindingsJSON(w, fs)
	case "yaml":
		return writePatches(w, fs)
	case "table", "wide":
		return writeRecommendTable(w, fs, format == "wide")
	case "csv":
		return writeRecommendCSV(w, fs)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(RecommendFormats, ", "))
}

// SelectFindings keeps every warning and critical finding, and every
// finding with savings or a recommended change, patch or not: "let the
// node pool scale down" is an action, and often the largest sum. all adds
// the rest (info findings without either); namespaces, when given, keeps
// only those namespaces' findings. The biggest monthly sum comes
// first, then the most severe.
func SelectFindings(in []findings.Finding, all bool, namespaces ...string) []findings.Finding {
	out := make([]findings.Finding, 0, len(in))
	for _, f := range in {
		if len(namespaces) > 0 && !slices.Contains(namespaces, f.Namespace) {
			// kubectl's -n: a node's or the fleet's finding belongs to
			// no namespace, so it is not listed.
			continue
		}
		if all || f.Severity != findings.Info || f.Recommendation != nil || (f.CostKnown && f.MonthlySavingsUSD != 0) {
			out = append(out, f)
		}
	}
	rank := map[findings.Severity]int{findings.Critical: 0, findings.Warning: 1, findings.Info: 2}
	slices.SortStableFunc(out, func(a, b findings.Finding) int {
		return cmp.Or(cmp.Compare(b.MonthlySavingsUSD, a.MonthlySavingsUSD), cmp.Compare(rank[a.Severity], rank[b.Severity]))
	})
	return out
}

// findingJSON is the JSON form of one finding, with the field names
// scripts rely on.
type findingJSON struct {
	Cluster           string               `json:"cluster,omitempty"`
	Kind              vocab.Kind           `json:"kind"`
	Severity          string               `json:"severity"`
	Namespace         string               `json:"namespace,omitempty"`
	Workload          string               `json:"workload,omitempty"`
	WorkloadKind      string               `json:"workload_kind,omitempty"`
	Pod               string               `json:"pod,omitempty"`
	Container         string               `json:"container,omitempty"`
	Node              string               `json:"node,omitempty"`
	GPUUUID           string               `json:"gpu_uuid,omitempty"`
	GPUInstance       string               `json:"gpu_instance,omitempty"`
	Model             string               `json:"model,omitempty"`
	WorkloadSource    string               `json:"workload_source,omitempty"`
	AllocationPath    vocab.AllocationPath `json:"allocation_path,omitempty"`
	Claims            []string             `json:"claims,omitempty"`
	Pods              []string             `json:"pods,omitempty"`
	GPUs              []string             `json:"gpus,omitempty"`
	Summary           string               `json:"summary"`
	Evidence          map[string]float64   `json:"evidence"`
	Recommendation    *recommendationFix   `json:"recommendation"`
	MonthlyCostUSD    *float64             `json:"monthly_cost_usd"`
	MonthlySavingsUSD *float64             `json:"monthly_savings_usd"`
	Confidence        float64              `json:"confidence"`
}

type recommendationFix struct {
	Action           string  `json:"action"`
	Summary          string  `json:"summary"`
	From             string  `json:"from,omitempty"`
	To               string  `json:"to,omitempty"`
	CurrentShare     float64 `json:"current_share"`
	RecommendedShare float64 `json:"recommended_share"`
	Reliability      bool    `json:"reliability,omitempty"`
	// Allocation is the allocation path the change is made on
	// (device-plugin or dra); Claim the DRA object the GPU comes from, and
	// ClaimTemplate the new ResourceClaimTemplate (JSON) to create before
	// the patch.
	Allocation         vocab.AllocationPath `json:"allocation,omitempty"`
	Claim              string               `json:"claim,omitempty"`
	ClaimTemplate      string               `json:"claim_template,omitempty"`
	PatchTarget        string               `json:"patch_target,omitempty"`
	Patch              string               `json:"patch,omitempty"`
	DevicePluginConfig string               `json:"device_plugin_config,omitempty"`
	Notes              []string             `json:"notes,omitempty"`
}

// WriteFindingsJSON writes every finding with the field names scripts
// rely on; an unknown price is null, never a misleading 0.
func WriteFindingsJSON(w io.Writer, fs []findings.Finding) error {
	out := make([]findingJSON, 0, len(fs))
	for _, f := range fs {
		r := findingJSON{Cluster: f.Cluster, Kind: f.Kind, Severity: string(f.Severity), Namespace: f.Namespace, Workload: f.Workload,
			WorkloadKind: f.WorkloadKind, Pod: f.Pod, Container: f.Container, Node: f.Node, GPUUUID: f.GPUUUID,
			GPUInstance: f.GPUInstance, Model: f.Model, WorkloadSource: f.WorkloadSource,
			AllocationPath: f.AllocationPath, Claims: f.Claims, Pods: f.Pods, GPUs: f.GPUs,
			Summary: f.Summary, Evidence: f.Evidence, Confidence: f.Confidence}
		if r.Evidence == nil {
			r.Evidence = map[string]float64{}
		}
		// Unknown prices are null, never a misleading 0.
		if f.CostKnown {
			cost, savings := f.MonthlyCostUSD, f.MonthlySavingsUSD
			r.MonthlyCostUSD, r.MonthlySavingsUSD = &cost, &savings
		}
		if rec := f.Recommendation; rec != nil {
			fix := &recommendationFix{Action: string(rec.Action), Summary: rec.Summary, From: rec.From, To: rec.To,
				CurrentShare: rec.CurrentShare, RecommendedShare: rec.RecommendedShare, Reliability: rec.Reliability,
				Allocation: rec.Allocation, Claim: rec.Claim,
				DevicePluginConfig: rec.DevicePluginConfig, Notes: rec.Notes}
			if rec.ClaimTemplate != nil {
				fix.ClaimTemplate = rec.ClaimTemplate.JSON
			}
			if rec.Patch != nil {
				fix.PatchTarget, fix.Patch = rec.Patch.Target, rec.Patch.JSON
			}
			r.Recommendation = fix
		}
		out = append(out, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// writeRecommendTable writes the findings' table, then each one's
// summary as a numbered paragraph, within 120 columns (termtable.Width)
// unless wide: the kind and the confidence are -o wide's columns, the
// change is wrapped in its cell.
func writeRecommendTable(w io.Writer, fs []findings.Finding, wide bool) error {
	if len(fs) == 0 {
		_, err := fmt.Fprintln(w, "No findings to act on: every workload is sized to its use, or there was too little data to judge (see --all).")
		return err
	}
	// A store of several clusters: the cluster is a column, first, as
	// kubectl's multi-context tools put it.
	clustered := slices.ContainsFunc(fs, func(f findings.Finding) bool { return f.Cluster != "" })
	var cols []termtable.Column
	if clustered {
		cols = append(cols, termtable.Column{Name: "Cluster"})
	}
	tb := termtable.New(append(cols, termtable.Column{Name: "Severity"}, termtable.Column{Name: "Kind", Wide: true},
		termtable.Column{Name: "Workload"}, termtable.Column{Name: "Change", Wrap: true}, termtable.Column{Name: "Savings/month"},
		termtable.Column{Name: "Confidence", Wide: true})...)
	for _, f := range fs {
		change := "-"
		if r := f.Recommendation; r != nil {
			change = string(r.Action)
			if r.From != "" && r.To != "" && r.From != r.To {
				change = r.From + " → " + r.To
			}
			if r.Allocation == vocab.AllocationPathDRA {
				// The device plugin's path is the usual one and left
				// unsaid; a claim's change is made elsewhere.
				change += " (dra)"
			}
		}
		savings := "unknown price"
		if f.CostKnown {
			savings = dollars(f.MonthlySavingsUSD)
		}
		// The subject, the cluster and a change's from and to are the
		// store's text: termtable escapes each, one cell on one row.
		row := []string{string(f.Severity), string(f.Kind), cmp.Or(workloadRef(f), f.Node+"/"+f.GPUUUID), change, savings, fmt.Sprintf("%.0f%%", 100*f.Confidence)}
		if clustered {
			row = append([]string{clusterCell(f.Cluster)}, row...)
		}
		tb.Row(row...)
	}
	if err := tb.Write(w, wide); err != nil {
		return err
	}
	fmt.Fprintln(w)
	for i, f := range fs {
		num := fmt.Sprintf("%d. ", i+1)
		_ = termtable.Prose(w, num, "   ", f.Summary, wide)
		r := f.Recommendation
		if r != nil && r.Summary != "" && !strings.Contains(f.Summary, r.Summary) {
			_ = termtable.Prose(w, "   ", "   ", r.Summary, wide)
		}
		if r != nil && r.Allocation == vocab.AllocationPathDRA {
			// A claim's change takes steps the table's columns cannot
			// say: which objects, and why not in place.
			_ = termtable.Prose(w, "   ", "   ", claimPath(f), wide)
			for _, note := range r.Notes {
				_ = termtable.Prose(w, "   - ", "     ", note, wide)
			}
		}
	}
	return nil
}

// dollars writes -$717 rather than $-717, and $5,774 as the report
// does (thousands, the one money format).
func dollars(v float64) string {
	if v < 0 {
		return "-$" + thousands(-v, 0)
	}
	return "$" + thousands(v, 0)
}

func workloadRef(f findings.Finding) string {
	if f.Workload == "" {
		return ""
	}
	return cmp.Or(f.WorkloadKind, "Pod") + "/" + f.Namespace + "/" + f.Workload
}

// claimPath says, for f's DRA recommendation, where the change is made.
func claimPath(f findings.Finding) string {
	r := f.Recommendation
	switch {
	case r.ClaimTemplate != nil:
		return fmt.Sprintf("allocation: dra, through %s (immutable): create ResourceClaimTemplate %s/%s and point the pod template at it",
			r.Claim, r.ClaimTemplate.Namespace, r.ClaimTemplate.Name)
	case r.Claim != "":
		return "allocation: dra, through " + r.Claim + ": nothing to patch"
	}
	return "allocation: dra"
}

// writePatches writes one YAML document per recommended change: a comment
// with the target and the command, then the patch. A DRA change through a
// claim template is two: the new template to create, then the patch that
// points the workload at it; one through a named ResourceClaim is a
// document of comments, since nothing can be applied to it.
func writePatches(w io.Writer, fs []findings.Finding) error {
	n := 0
	sep := func() {
		if n > 0 {
			fmt.Fprintln(w, "---")
		}
		n++
	}
	for _, f := range fs {
		r := f.Recommendation
		dra := r != nil && r.Allocation == vocab.AllocationPathDRA && r.Claim != ""
		if r == nil || (r.Patch == nil && r.DevicePluginConfig == "" && !dra) {
			continue
		}
		sep()
		if f.Cluster != "" {
			// The kubectl lines below are for that cluster's context.
			comment(w, "cluster: %s", f.Cluster)
		}
		comment(w, "%s", f.Summary)
		if dra {
			comment(w, "%s", claimPath(f))
			for _, note := range r.Notes {
				comment(w, "- %s", note)
			}
		} else if r.Allocation != "" {
			comment(w, "allocation: %s (the container's resources.limits)", r.Allocation)
		}
		if t := r.ClaimTemplate; t != nil {
			comment(w, "kubectl -n %s create -f <this document>", safetext.ShellArg(t.Namespace))
			fmt.Fprint(w, strings.TrimRight(t.YAML, "\n")+"\n")
			if r.Patch != nil {
				sep()
				comment(w, "then point %s at it:", r.Patch.Target)
			}
		}
		if r.Patch != nil {
			kind, rest, _ := strings.Cut(r.Patch.Target, "/")
			ns, name, _ := strings.Cut(rest, "/")
			if kind == "Pod" {
				// A pod's resources are immutable: the change belongs in
				// whatever creates the pod.
				comment(w, "%s/%s has no controller gpulens knows of; pods cannot be patched in place: apply this to the spec that creates it", ns, name)
			} else {
				// Each word is quoted as a shell reads it: copying the line
				// runs this command, whatever the labels hold.
				comment(w, "kubectl -n %s patch %s --type strategic --patch-file <this document>", safetext.ShellArg(ns), safetext.ShellObject(strings.ToLower(kind), name))
			}
			fmt.Fprint(w, strings.TrimRight(r.Patch.YAML, "\n")+"\n")
		}
		if r.DevicePluginConfig != "" {
			fmt.Fprintln(w, "# NVIDIA device plugin sharing config to roll out with it:")
			for line := range strings.Lines(strings.TrimRight(r.DevicePluginConfig, "\n")) {
				fmt.Fprintf(w, "#   %s", line)
			}
			fmt.Fprintln(w)
		}
	}
	if n == 0 {
		fmt.Fprintln(w, "# No patches: nothing to change.")
	}
	return nil
}

// comment writes one "# " line; what it says comes from the store (names,
// labels), so a line break in it is escaped rather than ending the comment.
func comment(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "# %s\n", safetext.Comment(fmt.Sprintf(format, args...)))
}
