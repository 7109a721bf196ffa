package report

import (
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
)

// ParseSelector parses gpulens recommend's -l as kubectl's, and refuses
// one that could match no finding (CheckSelector).
func ParseSelector(s string) (labels.Selector, error) {
	sel, err := labels.Parse(s)
	if err == nil {
		err = CheckSelector(sel)
	}
	return sel, err
}

// Filter is gpulens recommend's list: the findings SelectFindings keeps
// of namespaces, whose labels match sel. When the filter left none of
// the findings the window has, why says so (ExplainNoMatch), naming the
// namespaces that res's allocations held GPUs in even without a finding.
func Filter(res *fleet.Result, all []findings.Finding, listAll bool, namespaces []string, sel labels.Selector) (out []findings.Finding, why string) {
	out = slices.DeleteFunc(SelectFindings(all, listAll, namespaces...),
		func(f findings.Finding) bool { return !sel.Matches(labels.Set(FindingLabels(f))) })
	if len(out) > 0 {
		return out, ""
	}
	var inData []string
	if res != nil {
		for _, al := range res.Allocations {
			if al.Namespace != "" && !slices.Contains(inData, al.Namespace) {
				inData = append(inData, al.Namespace)
			}
		}
	}
	return out, ExplainNoMatch(all, inData, namespaces, sel)
}
