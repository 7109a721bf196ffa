package chart

import (
	"fmt"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
)

// Lint runs `helm lint --strict` on the chart with r's values: Chart.yaml,
// values.yaml (and its schema, if any), every template rendered and parsed
// as YAML, deprecated APIs for KubeVersion, dependencies and CRDs. It
// returns every message at warning or above; INFO messages (such as a
// missing icon) are not findings.
func Lint(chartDir string, r Release) []string {
	l := action.NewLint()
	l.Strict = true
	l.Namespace = r.namespace()
	l.KubeVersion = kubeVersion()
	vals := r.Values
	if vals == nil {
		vals = map[string]any{}
	}
	res := l.Run([]string{chartDir}, vals)
	var out []string
	for _, err := range res.Errors {
		// Errors repeats the messages at or above the tolerance; only the
		// ones that are not messages (a chart that cannot be read) are new.
		if !isMessage(res.Messages, err) {
			out = append(out, err.Error())
		}
	}
	for _, m := range res.Messages {
		if m.Severity >= support.WarningSev {
			out = append(out, m.Error())
		}
	}
	if res.TotalChartsLinted != 1 && len(out) == 0 {
		out = append(out, fmt.Sprintf("%s: %d charts linted, want 1", chartDir, res.TotalChartsLinted))
	}
	return out
}

func isMessage(msgs []support.Message, err error) bool {
	for _, m := range msgs {
		if m.Err == err {
			return true
		}
	}
	return false
}
