package serve

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/vocab"
)

// ruleFiles are the committed rule files, by the flag vocab.Alerts marks
// an alert each carries with.
var ruleFiles = map[vocab.RuleFiles]string{
	vocab.NativeRules: "../../alerts/gpulens.rules.yml",
	vocab.DCGMRules:   "../../alerts/dcgm-exporter.rules.yml",
}

// serveKinds is serve's catalogue: every finding kind the analysis emits,
// each of which serve sends as an alert.
var serveKinds = []vocab.Kind{vocab.KindIdleAllocation, vocab.KindUnderusedGPU, vocab.KindTimesliceOOMRisk,
	vocab.KindMIGOversized, vocab.KindMIGUndersized, vocab.KindTrainingOnShared, vocab.KindUnallocated,
	vocab.KindUntaintedNode, vocab.KindNoGPUQuota, vocab.KindMixedModels, vocab.KindGPUErrors,
	vocab.KindWorkloadXID, vocab.KindThermal, vocab.KindInsufficientData}

var ruleAlert = regexp.MustCompile(`(?m)^\s*- alert: (\S+)$`)

// TestOneAlertList reads both committed rule files and serve's catalogue:
// every alert either sends is in vocab.Alerts, marked with the rule files
// that carry it and the kind serve sends it for, and nothing in the list
// is sent by neither. A rule and a finding of the same condition are one
// entry, so they share its name.
func TestOneAlertList(t *testing.T) {
	listed := map[vocab.AlertName]vocab.Alert{}
	for _, a := range vocab.Alerts {
		listed[a.Name] = a
	}
	inRules := map[vocab.AlertName]vocab.RuleFiles{}
	for flag, path := range ruleFiles {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ms := ruleAlert.FindAllSubmatch(b, -1)
		if len(ms) == 0 {
			t.Fatalf("%s: no alerts read", path)
		}
		for _, m := range ms {
			name := vocab.AlertName(m[1])
			inRules[name] |= flag
			a, ok := listed[name]
			switch {
			case !ok:
				t.Errorf("%s: alert %s is not in vocab.Alerts", path, name)
			case a.Rules&flag == 0:
				t.Errorf("%s: alert %s is there, but vocab.Alerts does not mark it as in that file", path, name)
			}
		}
	}
	sent := map[vocab.AlertName]vocab.Kind{}
	for _, kind := range serveKinds {
		name := Alertname(kind)
		sent[name] = kind
		if a, ok := listed[name]; !ok || a.Kind != kind {
			t.Errorf("serve sends %s findings as %s, which vocab.Alerts does not list for that kind", kind, name)
		}
	}
	for _, a := range vocab.Alerts {
		if inRules[a.Name] != a.Rules {
			t.Errorf("vocab.Alerts: %s is in rule files %b, the committed files have it in %b", a.Name, a.Rules, inRules[a.Name])
		}
		if a.Kind != "" && sent[a.Name] != a.Kind {
			t.Errorf("vocab.Alerts: %s is listed for kind %s, which serve does not send under it", a.Name, a.Kind)
		}
	}
	// The pairs the list joins: serve's finding fires under the rule's name.
	for _, both := range []vocab.AlertName{vocab.AlertGPUAllocatedIdle, vocab.AlertGPUThermalThrottling} {
		if inRules[both] == 0 || sent[both] == "" {
			t.Errorf("%s should be both a rule alert and serve's", both)
		}
	}
}

// TestEveryAlertHasARunbook: each alert, serve's and the rules', links to
// a section of docs/runbooks.md named as the alert.
func TestEveryAlertHasARunbook(t *testing.T) {
	doc, err := os.ReadFile("../../docs/runbooks.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range vocab.Alerts {
		if !strings.Contains(string(doc), "\n## "+string(a.Name)+"\n") {
			t.Errorf("docs/runbooks.md has no section ## %s (runbook_url %s)", a.Name, a.RunbookURL())
		}
	}
}
