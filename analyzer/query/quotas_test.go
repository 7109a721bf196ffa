package query

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/signals"
)

// fixtureSeries reads an exposition-format fixture into the vectors
// ReadQuotaSeries would get, every sample of each metric, unfiltered: the
// reader's own filter (GPU resources only) is under test too.
func fixtureSeries(t *testing.T, path string) QuotaSeries {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	vec := func(name string) model.Vector {
		var out model.Vector
		for _, m := range fams[name].GetMetric() {
			metric := model.Metric{}
			for _, l := range m.GetLabel() {
				metric[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
			}
			out = append(out, &model.Sample{Metric: metric, Value: model.SampleValue(m.GetGauge().GetValue())})
		}
		return out
	}
	return QuotaSeries{
		ResourceQuotas: vec(signals.MetricResourceQuota),
		Nominal:        vec(signals.MetricKueueNominalQuota),
		Borrowing:      vec(signals.MetricKueueBorrowingLimit),
		LocalQueues:    vec(signals.MetricKueueLocalQueueUsage),
	}
}

// TestQuotaSeriesInventory: the store's quota series, as kube-state-metrics
// and Kueue export them (testdata/quota_series.prom, written from their
// metric definitions, cited there), build the inventory's quota side as
// the API server's objects would: GPU entries only, hard and used apart,
// a borrowing limit of +Inf read as none, each LocalQueue tied to the one
// ClusterQueue that offers its flavor, and a ClusterQueue whose
// namespaces the store cannot tell left out and said. At main there is no
// reader: `quota` without cluster access exited 6 whatever the store held.
func TestQuotaSeriesInventory(t *testing.T) {
	series := fixtureSeries(t, "testdata/quota_series.prom")
	if series.Empty() {
		t.Fatal("the fixture reads as empty")
	}
	inv, notes := series.Inventory()
	four := 4.0
	want := &inventory.Inventory{
		Available: true,
		Quotas: map[string][]inventory.Quota{
			// team-a's compute quota holds no GPU: left out; its gpu
			// quota keeps the GPU entry, not requests.cpu.
			"team-a": {{Name: "gpu", Hard: map[string]int64{"requests.nvidia.com/gpu": 8}, Used: map[string]int64{"requests.nvidia.com/gpu": 5}}},
			"team-b": {{Name: "mig", Hard: map[string]int64{"requests.nvidia.com/mig-1g.10gb": 4, "limits.nvidia.com/gpu": 2},
				Used: map[string]int64{"limits.nvidia.com/gpu": 1}}},
		},
		Kueue: &inventory.Kueue{
			ClusterQueues: []inventory.ClusterQueue{
				{Name: "cq-a", Cohort: "research", Quotas: []inventory.KueueQuota{{Flavor: "h100", Resource: "nvidia.com/gpu", Nominal: 16}}},
				{Name: "cq-b", Cohort: "research", Quotas: []inventory.KueueQuota{{Flavor: "a100", Resource: "nvidia.com/gpu", Nominal: 8, Borrowing: &four}}},
			},
			LocalQueues: []inventory.LocalQueue{
				{Namespace: "team-a", Name: "train", ClusterQueue: "cq-a"},
				{Namespace: "team-b", Name: "batch", ClusterQueue: "cq-b"},
				{Namespace: "team-b", Name: "train", ClusterQueue: "cq-a"},
			},
			Flavors: map[string]map[string]string{},
		},
	}
	if !reflect.DeepEqual(inv, want) {
		t.Errorf("inventory\n got %+v\n     %+v\nwant %+v\n     %+v", inv.Quotas, *inv.Kueue, want.Quotas, *want.Kueue)
	}
	if got := inv.Kueue.Namespaces("cq-a"); !reflect.DeepEqual(got, []string{"team-a", "team-b"}) {
		t.Errorf("cq-a's namespaces: %v", got)
	}
	// l4 is offered by cq-c and cq-d alike, so team-c's LocalQueue ties to
	// neither; t4's cq-e has no LocalQueue series at all.
	for _, w := range []string{"LocalQueue team-c/infer: its flavors are offered by several ClusterQueues",
		"ClusterQueue cq-c: not advised", "ClusterQueue cq-d: not advised", "ClusterQueue cq-e: not advised"} {
		if !containsPrefix(notes, w) {
			t.Errorf("no note %q in %q", w, notes)
		}
	}
	if len(notes) != 4 {
		t.Errorf("%d notes, want 4: %q", len(notes), notes)
	}
}

// TestQuotaSeriesEmpty: a store with no quota series, or only non-GPU
// ones filtered out by the queries, is empty: `quota` then keeps exit 6.
func TestQuotaSeriesEmpty(t *testing.T) {
	for _, c := range []struct {
		name string
		q    QuotaSeries
		want bool
	}{
		{"none", QuotaSeries{}, true},
		{"local queues only", QuotaSeries{LocalQueues: model.Vector{{}}}, true},
		{"a resource quota", QuotaSeries{ResourceQuotas: model.Vector{{}}}, false},
		{"a cluster queue", QuotaSeries{Nominal: model.Vector{{}}}, false},
	} {
		if got := c.q.Empty(); got != c.want {
			t.Errorf("%s: Empty %v, want %v", c.name, got, c.want)
		}
	}
}

func containsPrefix(notes []string, p string) bool {
	for _, n := range notes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}
