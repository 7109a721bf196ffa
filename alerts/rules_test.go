package alerts

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/internal/testenv"
	"github.com/gpulens/gpulens/vocab"
)

var update = flag.Bool("update", false, "rewrite the committed rule files and the Helm chart's copies")

const chartDir = "../deploy/helm/gpulens/files/alerts"

func TestCommittedRulesAreGenerated(t *testing.T) {
	for name, build := range Files {
		want, err := Render(build(criteria.DefaultConfig()))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{name, filepath.Join(chartDir, name)} {
			if *update {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, want, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(p)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s is stale or missing (%v): run make generate", p, err)
			}
		}
	}
}

// The rules follow from the findings' thresholds: a changed default
// changes the rule.
func TestThresholdsComeFromFindings(t *testing.T) {
	c := criteria.DefaultConfig()
	c.Idle.MaxAvgUtilization, c.Idle.MinHeldHours, c.OOMRisk.WarningRatio = 0.125, 1.5, 0.75
	for name, build := range Files {
		out, err := Render(build(c))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"< 0.125", "for: 90m", "> 0.75"} {
			if !bytes.Contains(out, []byte(want)) {
				t.Errorf("%s with changed defaults lacks %q", name, want)
			}
		}
	}
}

var (
	recordName = regexp.MustCompile(`^[a-z_]+:[A-Za-z_]+:[a-z0-9_]+$`)
	alertName  = regexp.MustCompile(`^` + vocab.AlertPrefix + `[A-Z][A-Za-z0-9]+$`)
)

func TestConventions(t *testing.T) {
	runbook, err := os.ReadFile("../docs/runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, build := range Files {
		for _, g := range build(criteria.DefaultConfig()).Groups {
			for _, r := range g.Rules {
				if r.Record != "" {
					if !recordName.MatchString(r.Record) {
						t.Errorf("%s: recording rule %s is not level:metric:operations", name, r.Record)
					}
					continue
				}
				if !alertName.MatchString(r.Alert) {
					t.Errorf("%s: alert %s is not CamelCase with prefix %s", name, r.Alert, vocab.AlertPrefix)
				}
				if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) {
					t.Errorf("%s: %s has severity %q", name, r.Alert, r.Labels["severity"])
				}
				if strings.Contains(r.Annotations["summary"], "{{") {
					t.Errorf("%s: %s: summary must be static", name, r.Alert)
				}
				if !strings.Contains(r.Annotations["description"], "{{") {
					t.Errorf("%s: %s: description is not templated", name, r.Alert)
				}
				if !bytes.Contains(runbook, []byte("## "+r.Alert+"\n")) {
					t.Errorf("%s: docs/runbooks.md has no section %q for runbook_url %s", name, r.Alert, r.Annotations["runbook_url"])
				}
			}
		}
	}
}

// TestPromtool runs Debian's promtool over the committed files: check
// rules, and the unit tests in testdata: NAME.test.yml (every alert before
// its for: elapses and after, labels and annotations asserted) and any
// NAME.*.test.yml beside it (dcgm-exporter.stock.test.yml: a stock GPU
// Operator install's label sets as dcgm-exporter's code writes them).
func TestPromtool(t *testing.T) {
	promtool := testenv.LookPath(t, "promtool")
	for name := range Files {
		out, err := exec.Command(promtool, "check", "rules", name).CombinedOutput()
		if err != nil {
			t.Errorf("promtool check rules %s: %v\n%s", name, err, out)
		}
		base := filepath.Join("testdata", strings.TrimSuffix(name, ".rules.yml"))
		more, err := filepath.Glob(base + ".*.test.yml")
		if err != nil {
			t.Fatal(err)
		}
		for _, test := range append([]string{base + ".test.yml"}, more...) {
			out, err = exec.Command(promtool, "test", "rules", test).CombinedOutput()
			if err != nil {
				t.Errorf("promtool test rules %s: %v\n%s", test, err, out)
			}
		}
	}
}

// Every alert has a promtool test.
func TestEveryAlertIsTested(t *testing.T) {
	for name, build := range Files {
		test, err := os.ReadFile(filepath.Join("testdata", strings.TrimSuffix(name, ".rules.yml")+".test.yml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range build(criteria.DefaultConfig()).Groups {
			for _, r := range g.Rules {
				if r.Alert != "" && len(regexp.MustCompile(`alertname: `+r.Alert+`[,\n]`).FindAll(test, -1)) < 2 {
					t.Errorf("%s: %s needs a test before its for: elapses and one after", name, r.Alert)
				}
			}
		}
	}
}

// TestRulesFitVictoriaMetrics: vmalert sends each rule's expression to
// VictoriaMetrics, which refuses a query over -search.maxQueryLen (16
// KiB by default). The per-allocation recordings of dcgm-exporter are
// the longest; `go test ./alerts -run FitVictoria -v` prints them.
func TestRulesFitVictoriaMetrics(t *testing.T) {
	const limit = 16 * 1024
	for name, build := range Files {
		longest, which := 0, ""
		for _, g := range build(criteria.DefaultConfig()).Groups {
			for _, r := range g.Rules {
				rule := r.Record + r.Alert
				if len(r.Expr) > longest {
					longest, which = len(r.Expr), rule
				}
				if len(r.Expr) > limit {
					t.Errorf("%s: %s is %d bytes, over VictoriaMetrics' default -search.maxQueryLen of %d", name, rule, len(r.Expr), limit)
				}
			}
		}
		t.Logf("%s: the longest expression is %s's, %d bytes", name, which, longest)
	}
}
