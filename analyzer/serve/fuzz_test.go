package serve

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/notify"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/vocab"
)

// FuzzFromFindings builds Alertmanager payloads from arbitrary findings:
// it must never panic, every alert must be a distinct label set that
// starts with the prefix, carry no empty label, and survive the JSON that
// goes on the wire.
func FuzzFromFindings(f *testing.F) {
	f.Add("idle-allocation", "warning", "team-a", "web", "gpu-1", "GPU-1", "held a whole H100", 100.0, true, "use-mig-profile", 2)
	f.Add("timeslice-oom-risk", "critical", "", "", "n", "u", "", -5.5, false, "", 1)
	f.Add("-a--b-", "info", "ns\xff", "w\"l", "", "", "\x00", 0.0, true, "x", 3)
	f.Fuzz(func(t *testing.T, kind, sev, ns, wl, node, uuid, summary string, savings float64, known bool, action string, n int) {
		n = 1 + (n%4+4)%4
		var fs []findings.Finding
		for i := range n {
			fd := findings.Finding{Kind: vocab.Kind(kind), Severity: findings.Severity(sev), Namespace: ns, Workload: wl, Node: node, GPUUUID: uuid,
				Summary: summary, MonthlySavingsUSD: savings, CostKnown: known}
			if i%2 == 1 {
				fd.Recommendation = &recommend.Recommendation{Action: recommend.Action(action), Summary: summary}
			}
			fs = append(fs, fd)
		}
		alerts := alertsOf(fs, "http://gpulens.example/report")
		// n identical identities are one alert.
		if len(alerts) != 1 {
			t.Fatalf("%d findings of one identity gave %d alerts", n, len(alerts))
		}
		a := alerts[0]
		if !strings.HasPrefix(a.Labels["alertname"], vocab.AlertPrefix) {
			t.Errorf("alertname %q lacks the prefix", a.Labels["alertname"])
		}
		for k, v := range a.Labels {
			if v == "" {
				t.Errorf("empty label %q", k)
			}
		}
		data, err := json.Marshal(alerts)
		if err != nil {
			t.Fatal(err)
		}
		var back []notify.Alert
		if err := json.Unmarshal(data, &back); err != nil || len(back) != 1 {
			t.Fatalf("payload does not decode: %v", err)
		}
		valid := true
		for _, v := range a.Labels {
			valid = valid && utf8.ValidString(v)
		}
		if valid && !maps.Equal(back[0].Labels, a.Labels) {
			t.Errorf("labels %v came back as %v", a.Labels, back[0].Labels)
		}
	})
}
