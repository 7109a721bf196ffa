package sim

import "testing"

// TestPrevious: the window before drops the pods that are new and takes
// each pod's previous utilisation, and leaves the scenario itself as it
// was (the current window is simulated from it after the previous one).
func TestPrevious(t *testing.T) {
	s := &Scenario{Seed: 7, Nodes: []Node{{Name: "n1", Pods: []Pod{
		{Namespace: "a", Name: "old", Utilization: 0.06, PreviousUtilization: 0.45},
		{Namespace: "a", Name: "arrived", New: true, Utilization: 0.9},
		{Namespace: "b", Name: "same", Utilization: 0.3},
	}}}}
	p := s.Previous()
	if p.Seed != 7 || len(p.Nodes) != 1 || p.Nodes[0].Name != "n1" {
		t.Fatalf("previous scenario %+v: want seed 7 and node n1", p)
	}
	got := map[string]float64{}
	for _, pod := range p.Nodes[0].Pods {
		got[pod.Name] = pod.Utilization
	}
	want := map[string]float64{"old": 0.45, "same": 0.3}
	if len(got) != len(want) || got["old"] != want["old"] || got["same"] != want["same"] {
		t.Errorf("previous pods %v, want %v", got, want)
	}
	if n := len(s.Nodes[0].Pods); n != 3 || s.Nodes[0].Pods[0].Utilization != 0.06 {
		t.Errorf("the scenario changed: %d pods, old at %v; want 3 pods, old at 0.06", n, s.Nodes[0].Pods[0].Utilization)
	}
}

// TestDefaultPreviousWeek: the embedded demo fleet declares a story for
// the week before (six notebooks time-slicing an A100 that arrived this week, video-analytics
// busier before its traffic moved), so the demo's report has a change.
func TestDefaultPreviousWeek(t *testing.T) {
	cur, prev := Default(), Default().Previous()
	count := func(s *Scenario) (n int) {
		for _, node := range s.Nodes {
			n += len(node.Pods)
		}
		return n
	}
	if d := count(cur) - count(prev); d != 6 {
		t.Errorf("the previous week has %d pods fewer, want 6 (the new notebooks on gpu-a100-01/4)", d)
	}
	for _, node := range prev.Nodes {
		for _, p := range node.Pods {
			if p.Name == "video-analytics" && p.Utilization != 0.45 {
				t.Errorf("video-analytics the week before at %v, want 0.45", p.Utilization)
			}
		}
	}
}
