package quota

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gpulens/gpulens/analyzer/inventory"
)

// inv has a ClusterQueue in no cohort, whose peak is above the advised
// quota (a note), and a ResourceQuota that changes (a patch).
func inv() *inventory.Inventory {
	return &inventory.Inventory{Available: true,
		Kueue: &inventory.Kueue{
			ClusterQueues: []inventory.ClusterQueue{{Name: "team-a-alone", Quotas: []inventory.KueueQuota{{Flavor: "h100", Resource: "nvidia.com/gpu", Nominal: 2, Path: "/p"}}}},
			LocalQueues:   []inventory.LocalQueue{{Namespace: "team-a", Name: "q", ClusterQueue: "team-a-alone"}},
			Flavors:       map[string]map[string]string{"h100": {gpuProductLabel: "NVIDIA-H100-80GB-HBM3"}},
		},
		Quotas: map[string][]inventory.Quota{"team-a": {{Name: "gpu", Hard: map[string]int64{"requests.nvidia.com/gpu": 9}}}},
	}
}

// TestWriteClusters: advice of several clusters shows each quota's
// cluster in the table, the JSON, the notes and the patches; advice of
// one cluster's store names none.
func TestWriteClusters(t *testing.T) {
	advice := func(cluster string) []Advice {
		out := Advise(scenario(), inv(), 0)
		for i := range out {
			out[i].Cluster = cluster
		}
		return out
	}
	clustered := append(advice("eu"), advice("us")...)
	write := func(a []Advice, format string) string {
		var buf bytes.Buffer
		if err := Write(&buf, a, nil, format); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}

	// -o wide: the notes whole, each on its line.
	table := write(clustered, "wide")
	lines := strings.Split(table, "\n")
	if !strings.HasPrefix(lines[0], "CLUSTER ") {
		t.Errorf("header %q lacks the cluster column", lines[0])
	}
	for i, a := range clustered {
		if !strings.HasPrefix(lines[1+i], a.Cluster+" ") {
			t.Errorf("row %d %q does not start with its cluster %s", i, lines[1+i], a.Cluster)
		}
		for _, n := range a.Notes {
			if !strings.Contains(table, "Note: cluster "+a.Cluster+": "+a.Kind+" "+a.Name+": "+n) {
				t.Errorf("note %q of %s is not said of its cluster", n, a.Cluster)
			}
		}
	}
	if !strings.Contains(table, "Note: cluster us: ClusterQueue team-a-alone: the peak") {
		t.Errorf("the table does not say the queue's note of cluster us:\n%s", table)
	}
	if js := write(clustered, "json"); !strings.Contains(js, `"cluster": "eu"`) || !strings.Contains(js, `"cluster": "us"`) {
		t.Errorf("the JSON does not name the clusters:\n%s", js)
	}
	patches := write(clustered, "yaml")
	for _, c := range []string{"eu", "us"} {
		if !strings.Contains(patches, "# cluster "+c+": ") {
			t.Errorf("no patch says it is of cluster %s:\n%s", c, patches)
		}
	}

	for _, format := range Formats {
		if out := write(advice(""), format); strings.Contains(strings.ToLower(out), "cluster\t") || strings.Contains(out, "CLUSTER") ||
			strings.Contains(out, `"cluster"`) || strings.Contains(out, "cluster eu") {
			t.Errorf("%s of one cluster's advice names a cluster:\n%s", format, out)
		}
	}
}
