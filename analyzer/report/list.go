package report

import (
	"k8s.io/apimachinery/pkg/labels"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/internal/safetext"
)

// ListOptions are gpulens recommend's filter flags and its -o.
type ListOptions struct {
	All        bool // --all: also the info findings that carry no change
	Namespaces []string
	Selector   labels.Selector
	Format     string
}

// Listing is gpulens recommend's answer: the findings the filter kept,
// and what the command says beside them.
type Listing struct {
	Findings []findings.Finding
	// Said are the lines for standard error, in order: the clusters not
	// read, the workloads whose findings were skipped, and, in a format
	// other than the table, why the filter left nothing. Each names
	// clusters or workloads, which is store text: they are made safe.
	Said []string
	// Empty is the table's whole answer where the filter, not the fleet,
	// left nothing ("No findings: WHY.\n"): the table's own empty message
	// ("every workload is sized to its use") would be false. "" otherwise.
	Empty string
}

// List filters res's findings (Filter) for recommend. clusterNotes are
// the session's (session.Session.ClusterNotes).
func List(cur *fleet.Result, res *findings.Result, clusterNotes []string, o ListOptions) Listing {
	var l Listing
	for _, n := range clusterNotes {
		l.Said = append(l.Said, "note: "+safetext.Line(n))
	}
	for _, s := range res.Skipped {
		l.Said = append(l.Said, "skipped: "+safetext.Line(s))
	}
	var why string
	l.Findings, why = Filter(cur, res.Findings, o.All, o.Namespaces, o.Selector)
	switch {
	case why != "" && o.Format == "table":
		l.Empty = "No findings: " + why + ".\n"
	case why != "":
		l.Said = append(l.Said, "note: "+why)
	}
	return l
}
