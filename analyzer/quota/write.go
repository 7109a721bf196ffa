package quota

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gpulens/gpulens/internal/safetext"
)

// Formats are what Write accepts.
var Formats = []string{"table", "json", "yaml"}

// Write renders advice as a table, as JSON, or as the patches, one YAML
// document each with the kubectl command that applies it.
func Write(w io.Writer, advice []Advice, notes []string, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if advice == nil {
			advice = []Advice{}
		}
		return enc.Encode(struct {
			Quotas []Advice `json:"quotas"`
			Notes  []string `json:"notes"`
		}{advice, append([]string{}, notes...)})
	case "yaml":
		return writePatches(w, advice)
	case "table":
		return writeTable(w, advice, notes)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

func writeTable(w io.Writer, advice []Advice, notes []string) error {
	if len(advice) == 0 {
		fmt.Fprintln(w, "No GPU quota to advise: no Kueue ClusterQueue or ResourceQuota limits a GPU resource.")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		// col is the cluster column, where the advice is of several
		// clusters.
		col := func(string) string { return "" }
		if clustered(advice) {
			col = func(c string) string { return safetext.Cell(dash(c)) + "\t" }
			fmt.Fprint(tw, "CLUSTER\t")
		}
		fmt.Fprintln(tw, "KIND\tNAME\tFLAVOR\tRESOURCE\tNAMESPACES\tQUOTA\tBORROWING\tPEAK\tP95\tADVISED\tADVISED BORROWING")
		for _, a := range advice {
			name := a.Name
			if a.Namespace != "" {
				name = a.Namespace + "/" + a.Name
			}
			// Names from the cluster and the store, escaped for the
			// terminal, each one cell (safetext.Cell: a tab in one would
			// shift the columns).
			fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\t%g\t%s\t%g\t%g\t%d\t%s\n", col(a.Cluster), a.Kind, safetext.Cell(name), safetext.Cell(dash(a.Flavor)), safetext.Cell(a.Resource),
				safetext.Cell(dash(strings.Join(a.Namespaces, ","))), a.Quota, limit(a.Borrowing), a.Peak, a.P95, a.Advised, intLimit(a.AdvisedBorrowing))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "\nPeak and p95 are GPUs held at once over the window's steps; the advised quota covers the p95 with the margin (quota.margin of --config), and, in a cohort, the borrowing limit the rest of the peak.")
		for _, a := range advice {
			for _, n := range a.Notes {
				fmt.Fprintf(w, "Note: %s\n", safetext.Line(fmt.Sprintf("%s%s %s: %s", of(a), a.Kind, a.Name, n)))
			}
		}
	}
	for _, n := range notes {
		fmt.Fprintf(w, "Note: %s\n", safetext.Line(n))
	}
	return nil
}

func writePatches(w io.Writer, advice []Advice) error {
	n := 0
	for _, a := range advice {
		if !a.Changes() {
			continue
		}
		if n > 0 {
			fmt.Fprintln(w, "---")
		}
		n++
		// The command's words are quoted as a shell reads them: copying
		// the line runs this patch, whatever the names hold.
		target := safetext.ShellObject(strings.ToLower(a.Kind), a.Name)
		if a.Kind == KindClusterQueue {
			target = safetext.ShellObject("clusterqueues.kueue.x-k8s.io", a.Name)
		}
		ns := ""
		if a.Namespace != "" {
			ns = "-n " + safetext.ShellArg(a.Namespace) + " "
		}
		// Names come from the store and the cluster: a line break in one
		// is escaped rather than ending the comment.
		fmt.Fprintf(w, "# %s\n", safetext.Comment(fmt.Sprintf("%s%s %s: %s, p95 %g and peak %g GPUs held at once", of(a), a.Kind, a.Name, a.Resource, a.P95, a.Peak)))
		fmt.Fprintf(w, "# %s\n", safetext.Comment(fmt.Sprintf("kubectl %spatch %s --type %s --patch-file <this document>", ns, target, a.PatchType)))
		fmt.Fprintln(w, a.Patch)
	}
	if n == 0 {
		fmt.Fprintln(w, "# No patches: every GPU quota fits what was held.")
	}
	return nil
}

// clustered says whether the advice is of a store of several clusters.
func clustered(advice []Advice) bool {
	return slices.ContainsFunc(advice, func(a Advice) bool { return a.Cluster != "" })
}

// of names the advice's cluster before it, in notes and comments.
func of(a Advice) string {
	if a.Cluster == "" {
		return ""
	}
	return "cluster " + a.Cluster + ": "
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func limit(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%g", *v)
}

func intLimit(v *int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}
