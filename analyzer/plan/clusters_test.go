package plan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// clusteredPlan is the golden plan's fleet in two clusters, eu and us:
// each planned apart, as Session.Plan does for a store of several.
func clusteredPlan(t *testing.T) *Plan {
	us, eu := goldenPlan(t), goldenPlan(t)
	us.Notes = []string{"no cluster access: workloads are inferred from pod names"}
	return MergeClusters([]Clustered{{Cluster: "us", Plan: us}, {Cluster: "eu", Plan: eu}})
}

// TestMergeClusters: the clusters' pools are kept apart, in cluster
// order, each naming its cluster, its assignments' workloads too; the
// totals add the clusters up, and each note names its cluster.
func TestMergeClusters(t *testing.T) {
	one := goldenPlan(t)
	p := clusteredPlan(t)
	if len(p.Clusters) != 2 || p.Clusters[0] != "eu" || p.Clusters[1] != "us" {
		t.Fatalf("clusters %q, want eu, us", p.Clusters)
	}
	if len(p.Pools) != 2*len(one.Pools) {
		t.Fatalf("%d pools, want %d: each cluster's own", len(p.Pools), 2*len(one.Pools))
	}
	for i, pp := range p.Pools {
		want := []string{"eu", "us"}[i/len(one.Pools)]
		if pp.Cluster != want || pp.Model != one.Pools[i%len(one.Pools)].Model {
			t.Errorf("pool %d: %s of %q, want %s of %q", i, pp.Model, pp.Cluster, one.Pools[i%len(one.Pools)].Model, want)
		}
		for _, a := range pp.Assignments {
			if a.Workload.Cluster != want {
				t.Errorf("pool %d: %s names cluster %q, want %q", i, a.Lane, a.Workload.Cluster, want)
			}
		}
	}
	// 8 GPUs → 3 and 3 nodes → 2 in each cluster (TestOutputGolden).
	if p.GPUsToday != 16 || p.GPUsNeeded != 6 || p.NodesToday != 6 || p.NodesNeeded != 4 || p.HeadroomGPUs != 6 || p.MonthlySavingUSD != 2*one.MonthlySavingUSD {
		t.Errorf("%d → %d GPUs, %d → %d nodes, %d headroom, $%.0f; want 16 → 6, 6 → 4, 6, $%.0f",
			p.GPUsToday, p.GPUsNeeded, p.NodesToday, p.NodesNeeded, p.HeadroomGPUs, p.MonthlySavingUSD, 2*one.MonthlySavingUSD)
	}
	if len(p.Notes) != 1 || p.Notes[0] != "cluster us: no cluster access: workloads are inferred from pod names" {
		t.Errorf("notes %q, want us's, naming it", p.Notes)
	}
	// The merge leaves the clusters' own plans as they were.
	if one.Pools[0].Cluster != "" || one.Pools[0].Assignments[0].Workload.Cluster != "" {
		t.Error("the merge named the cluster in a cluster's own plan")
	}
	b, err := json.Marshal(one)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"cluster`) {
		t.Error("the plan of one cluster's store names a cluster in its JSON")
	}
}

// TestOutputClusters: a plan of several clusters shows each pool's and
// each workload's cluster, and each node group and patch says which
// cluster it is for; the golden files show the layout.
func TestOutputClusters(t *testing.T) {
	p := clusteredPlan(t)
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, p, format); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "plan-clusters."+format+".golden")
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("differs from %s (go test -update rewrites it):\n%s", path, buf.String())
			}
			out := buf.String()
			for _, c := range []string{"eu", "us"} {
				if !strings.Contains(out, "cluster "+c) && !strings.Contains(out, `"cluster": "`+c+`"`) {
					t.Errorf("%s does not name cluster %s", format, c)
				}
			}
		})
	}
}
