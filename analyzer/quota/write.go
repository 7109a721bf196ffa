package quota

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/internal/safetext"
	"github.com/gpulens/gpulens/internal/termtable"
)

// Formats are what Write accepts: wide is the table with the flavors and
// namespaces and every line whole, as kubectl's -o wide.
var Formats = []string{"table", "wide", "json", "yaml"}

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
	case "table", "wide":
		return writeTable(w, advice, notes, format == "wide")
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

// writeTable writes the advice for a terminal, within 120 columns
// (termtable.Width) unless wide: a ClusterQueue's flavor and the
// namespaces are -o wide's columns, notes are wrapped at 120. Names from
// the cluster and the store are escaped by termtable, each one cell.
func writeTable(w io.Writer, advice []Advice, notes []string, wide bool) error {
	if len(advice) == 0 {
		fmt.Fprintln(w, "No GPU quota to advise: no Kueue ClusterQueue or ResourceQuota limits a GPU resource.")
	} else {
		var cols []termtable.Column
		if clustered(advice) {
			cols = append(cols, termtable.Column{Name: "Cluster"})
		}
		tb := termtable.New(append(cols, termtable.Column{Name: "Kind"}, termtable.Column{Name: "Name"}, termtable.Column{Name: "Flavor", Wide: true},
			termtable.Column{Name: "Resource"}, termtable.Column{Name: "Namespaces", Wide: true}, termtable.Column{Name: "Quota"},
			termtable.Column{Name: "Borrowing"}, termtable.Column{Name: "Peak"}, termtable.Column{Name: "P95"}, termtable.Column{Name: "Advised"},
			termtable.Column{Name: "Advised borrowing"})...)
		for _, a := range advice {
			name := a.Name
			if a.Namespace != "" {
				name = a.Namespace + "/" + a.Name
			}
			row := []string{string(a.Kind), name, dash(a.Flavor), string(a.Resource), dash(strings.Join(a.Namespaces, ",")), fmt.Sprintf("%g", a.Quota),
				limit(a.Borrowing), fmt.Sprintf("%g", a.Peak), fmt.Sprintf("%g", a.P95), fmt.Sprint(a.Advised), intLimit(a.AdvisedBorrowing)}
			if clustered(advice) {
				row = append([]string{dash(a.Cluster)}, row...)
			}
			tb.Row(row...)
		}
		if err := tb.Write(w, wide); err != nil {
			return err
		}
		fmt.Fprintln(w)
		_ = termtable.Prose(w, "", "  ", "Peak and p95 are GPUs held at once over the window's steps; the advised quota covers the p95 with the margin (quota.margin of --config), and, in a cohort, the borrowing limit the rest of the peak.", wide)
		for _, a := range advice {
			for _, n := range a.Notes {
				_ = termtable.Prose(w, "Note: ", "      ", fmt.Sprintf("%s%s %s: %s", of(a), a.Kind, a.Name, n), wide)
			}
		}
	}
	for _, n := range notes {
		_ = termtable.Prose(w, "Note: ", "      ", n, wide)
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
