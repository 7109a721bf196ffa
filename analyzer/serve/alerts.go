package serve

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/notify"
	"github.com/gpulens/gpulens/vocab"
)

// Alertname is the alertname of a finding kind: its entry in vocab.Alerts,
// the list the rule files' alerts are in too, so that a finding and a rule
// that judge the same condition (idle-allocation and
// GPULensGPUAllocatedIdle) fire under one name, and routes and silences
// match all of gpulens's alerts with alertname=~"GPULens.*". A kind the
// list lacks (a test keeps there being none) gets the prefix and its words
// capitalised, so that it is still sent.
func Alertname(kind vocab.Kind) vocab.AlertName {
	if a, ok := vocab.AlertOf(kind); ok {
		return a.Name
	}
	var b strings.Builder
	b.WriteString(vocab.AlertPrefix)
	for w := range strings.SplitSeq(string(kind), "-") {
		if w == "" {
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]))
		b.WriteString(w[1:])
	}
	return vocab.AlertName(b.String())
}

// identity are the labels that make a finding one alert. Pod and container
// are left out on purpose: a Deployment's pods come and go, and one alert
// per workload survives a rollout instead of resolving and firing again.
// The cluster is in, where the store holds several: routes can send each
// cluster's alerts to its own receiver with cluster="...".
func identity(f findings.Finding) map[string]string {
	l := map[string]string{"alertname": string(Alertname(f.Kind))}
	for k, v := range map[string]string{"severity": string(f.Severity), "cluster": f.Cluster, "namespace": f.Namespace, "workload": f.Workload, "node": f.Node, "gpu_uuid": f.GPUUUID} {
		// Empty labels are absent labels to Alertmanager; sending them
		// would only make the JSON longer.
		if v != "" {
			l[k] = v
		}
	}
	return l
}

// alertsOf turns findings into alerts (without times: the Tracker sets
// them). Findings that share an identity, such as several pods of one
// Deployment, become one alert whose savings are their sum. reportURL,
// when set, is linked from every alert.
func alertsOf(fs []findings.Finding, reportURL string) []notify.Alert {
	type group struct {
		first   findings.Finding
		n       int
		savings float64
		known   bool
	}
	var order []string
	groups := map[string]*group{}
	for _, f := range fs {
		fp := notify.Fingerprint(identity(f))
		g, ok := groups[fp]
		if !ok {
			g = &group{first: f, known: true}
			groups[fp] = g
			order = append(order, fp)
		}
		g.n++
		g.savings += f.MonthlySavingsUSD
		g.known = g.known && f.CostKnown
	}
	out := make([]notify.Alert, 0, len(order))
	for _, fp := range order {
		g := groups[fp]
		f := g.first
		a := notify.Alert{Labels: identity(f), Annotations: map[string]string{"summary": f.Summary,
			// As the rule files' alerts carry them: the section of
			// docs/runbooks.md for the kind.
			"runbook_url": vocab.RunbookURL(Alertname(f.Kind))}}
		if g.n > 1 {
			a.Annotations["summary"] = fmt.Sprintf("%s (and %d more like it)", f.Summary, g.n-1)
		}
		a.Annotations["description"] = strings.TrimSuffix(a.Annotations["summary"], ".") + "."
		if r := f.Recommendation; r != nil && r.Summary != "" {
			a.Annotations["recommendation"] = r.Summary
			a.Annotations["description"] += " Recommended: " + r.Summary + "."
		}
		if g.known {
			a.Annotations["savings"] = fmt.Sprintf("$%.0f/month", g.savings)
			a.Annotations["monthly_savings_usd"] = strconv.FormatFloat(g.savings, 'f', 2, 64)
		}
		if reportURL != "" {
			a.Annotations["report"] = reportURL
			a.GeneratorURL = reportURL
		}
		out = append(out, a)
	}
	return out
}
