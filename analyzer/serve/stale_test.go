package serve

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/vocab"
)

// onNode is an unallocated-capacity finding for a GPU of node with the
// given advice (none for a nil action).
func onNode(node, uuid string, action recommend.Action) findings.Finding {
	f := findings.Finding{Kind: vocab.KindUnallocated, Severity: findings.Warning, Node: node, GPUUUID: uuid, Summary: uuid + " sat unallocated"}
	if action != "" {
		f.Recommendation = &recommend.Recommendation{Action: action, Summary: string(action)}
	} else {
		f.Severity = findings.Info
	}
	return f
}

// served is the advice /api/v1/findings serves: "node gpu action".
func served(t *testing.T, s *Service) ([]string, bool) {
	t.Helper()
	_, _, body := get(t, s.Handler(), "/api/v1/findings")
	var fr struct {
		Stale    bool `json:"stale"`
		Findings []struct {
			Node           string `json:"node"`
			GPU            string `json:"gpu_uuid"`
			Recommendation *struct {
				Action string `json:"action"`
			} `json:"recommendation"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(body), &fr); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	var out []string
	for _, f := range fr.Findings {
		a := "none"
		if f.Recommendation != nil {
			a = f.Recommendation.Action
		}
		out = append(out, f.Node+" "+f.GPU+" "+a)
	}
	slices.Sort(out)
	return out, fr.Stale
}

// TestStaleDataKeepsTheLastAdvice guards issue 52 in serve: node-b's
// exporter stops, so the next analysis cannot judge node-b (it advises
// nothing there, where main 36bc8ff advised scale-down-node-pool);
// serve keeps node-b's previous advice, served, exported and alerted
// on, while node-a's follows the new analysis. When every node's data
// has stopped, the whole last good analysis stays, marked stale, as
// after a failed analysis. On main 36bc8ff each cycle replaced the
// advice with the analysis's.
func TestStaleDataKeepsTheLastAdvice(t *testing.T) {
	fresh := result(onNode("node-a", "GPU-a", recommend.ActionConsolidate), onNode("node-b", "GPU-b", recommend.ActionConsolidate))
	bStopped := result(onNode("node-a", "GPU-a", recommend.ActionScaleDown), onNode("node-b", "GPU-b", ""))
	bStopped.Stale = []fleet.NodeRef{{Node: "node-b"}}
	allStopped := result(onNode("node-a", "GPU-a", ""), onNode("node-b", "GPU-b", ""))
	allStopped.Stale, allStopped.AllStale = []fleet.NodeRef{{Node: "node-a"}, {Node: "node-b"}}, true
	sc := &script{steps: []func() (*Result, error){ok(fresh), ok(bStopped), ok(allStopped)}}
	s := New(Options{Analyze: sc.analyze, Interval: time.Minute})
	for i, want := range [][]string{
		{"node-a GPU-a consolidate-nodes", "node-b GPU-b consolidate-nodes"},
		// node-b's data stopped: its advice stays; node-a's is new.
		{"node-a GPU-a scale-down-node-pool", "node-b GPU-b consolidate-nodes"},
		// Every node's stopped: the last good analysis stays, stale.
		{"node-a GPU-a scale-down-node-pool", "node-b GPU-b consolidate-nodes"},
	} {
		s.Cycle(context.Background())
		got, stale := served(t, s)
		if !slices.Equal(got, want) {
			t.Errorf("cycle %d: served\n%s\nwant\n%s", i+1, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if stale != (i == 2) {
			t.Errorf("cycle %d: stale %v", i+1, stale)
		}
		_, _, m := get(t, s.Handler(), "/metrics")
		if !strings.Contains(m, `gpulens_finding{kind="unallocated-capacity",severity="warning",node="node-b",gpu_uuid="GPU-b"} 1`) {
			t.Errorf("cycle %d: node-b's kept finding is not exported:\n%s", i+1, m)
		}
	}
}
