package reclaim

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestMetricsDoc keeps docs/METRICS.md's gpulens_reclaim_ rows and
// Families in step, names and types both ways.
func TestMetricsDoc(t *testing.T) {
	data, err := os.ReadFile("../../docs/METRICS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := map[string]string{}
	for l := range strings.Lines(string(data)) {
		cells := strings.Split(l, "|")
		if len(cells) < 7 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "gpulens_reclaim_") {
			continue
		}
		doc[strings.TrimSpace(cells[1])] = strings.TrimSpace(cells[2])
	}
	for _, f := range Families {
		if doc[f.Name] != f.Type {
			t.Errorf("%s: METRICS.md says type %q, the code %q", f.Name, doc[f.Name], f.Type)
		}
		delete(doc, f.Name)
	}
	for name := range doc {
		t.Errorf("docs/METRICS.md lists %s, which is not in Families", name)
	}
}

// TestAccount: a reclaimed notebook of 2 GPUs at $5 an hour, 30 minutes
// between cycles, released 1 GPU-hour worth $2.50; a running one nothing.
func TestAccount(t *testing.T) {
	c := New(Options{Policy: DefaultPolicy()})
	objs := []Object{
		{Ref: Ref{"a", KindDeployment, "nb"}, Annotations: map[string]string{ReclaimedAtAnnotation: ago(time.Hour), EvidenceAnnotation: `{"gpus":2,"hourly_usd":5}`}},
		{Ref: Ref{"a", KindDeployment, "up"}, Replicas: 1, Annotations: map[string]string{ReclaimedAtAnnotation: ago(time.Hour), EvidenceAnnotation: `{"gpus":4,"hourly_usd":9}`}},
	}
	c.account(now, objs)
	c.account(now.Add(30*time.Minute), objs)
	var b strings.Builder
	if err := c.o.Metrics.Write(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gpulens_reclaim_gpu_hours_total 1\n", "gpulens_reclaim_usd_total 2.5\n", "gpulens_reclaim_workloads_reclaimed 1\n",
		"# TYPE gpulens_reclaim_usd_total counter\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
	if n := strings.Count(b.String(), "# TYPE gpulens_reclaim_decisions gauge"); n != 1 {
		t.Errorf("%d TYPE lines for the decisions, want 1", n)
	}
}
