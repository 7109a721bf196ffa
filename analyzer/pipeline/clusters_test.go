package pipeline

import (
	"context"
	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals/native"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/vocab"
)

// openStore writes the fixtures into one TSDB, as one store holds the
// clusters' series under their external labels.
func openStore(t *testing.T, fs ...*pipelinetest.Fixture) *source.Embedded {
	t.Helper()
	dir := t.TempDir()
	if err := pipelinetest.WriteAll(dir, fs...); err != nil {
		t.Fatal(err)
	}
	src, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

func readFixture(t *testing.T, labels map[string]string) *pipelinetest.Fixture {
	t.Helper()
	f, err := pipelinetest.Read("testdata/fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f.Labels = labels
	return f
}

func run(t *testing.T, src source.Source, label string) *Analysis {
	t.Helper()
	a, err := Run(context.Background(), Options{Source: src, Schema: native.Schema{}, Start: weekStart, End: weekEnd, ClusterLabel: label})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestOneClusterReadsAsBefore: a store without the cluster label gives,
// with the label named, exactly the analysis it gave without.
func TestOneClusterReadsAsBefore(t *testing.T) {
	src := openStore(t, readFixture(t, nil))
	without, with := run(t, src, ""), run(t, src, vocab.DefaultClusterLabel)
	if with.Clusters != nil {
		t.Errorf("clusters %q in a store without the label", with.Clusters)
	}
	for name, pair := range map[string][2]any{
		"current": {without.Current, with.Current}, "previous": {without.Previous, with.Previous},
		"findings": {without.Findings, with.Findings}, "notes": {without.Notes, with.Notes},
	} {
		if !reflect.DeepEqual(pair[0], pair[1]) {
			t.Errorf("%s differ with the cluster label named", name)
		}
	}
}

// TestClustersAreApart: two clusters with the same nodes, namespaces and
// pods in one store are two clusters: each cluster's rows are the rows of
// its own store alone, named for it, and nothing is summed across them.
func TestClustersAreApart(t *testing.T) {
	eu := readFixture(t, map[string]string{"cluster": "eu"})
	us := readFixture(t, map[string]string{"cluster": "us"})
	// us has no idle notebook this week: its research GPU is free.
	us.Allocations = slices.DeleteFunc(us.Allocations, func(a pipelinetest.Allocation) bool { return a.Pod == "alice-jupyter" })
	a := run(t, openStore(t, eu, us), vocab.DefaultClusterLabel)
	if !slices.Equal(a.Clusters, []string{"eu", "us"}) {
		t.Fatalf("clusters %q, want eu and us", a.Clusters)
	}
	if len(a.Current.GPUs) != len(eu.GPUs)+len(us.GPUs) {
		t.Errorf("%d GPUs, want %d", len(a.Current.GPUs), len(eu.GPUs)+len(us.GPUs))
	}

	for _, c := range []struct {
		name string
		f    *pipelinetest.Fixture
	}{{"eu", eu}, {"us", us}} {
		t.Run(c.name, func(t *testing.T) {
			alone := *c.f
			alone.Labels = nil
			want := run(t, openStore(t, &alone), "")
			want.Current.SetCluster(c.name)
			if got := a.Current.OfCluster(c.name); !reflect.DeepEqual(got, want.Current.OfCluster(c.name)) {
				t.Errorf("rows differ from the cluster's own store:\n got %+v\nwant %+v", got.Workloads, want.Current.OfCluster(c.name).Workloads)
			}
			// The training H100 is held whole all week in each cluster:
			// 168 GPU-hours each, never 336.
			for _, g := range a.Current.GPUs {
				if g.Cluster == c.name && g.UUID == "GPU-h100-a" && g.AllocatedGPUHours != 168 {
					t.Errorf("GPU-h100-a of %s: %v GPU-hours, want 168", c.name, g.AllocatedGPUHours)
				}
			}
			wantIdle := c.name == "eu"
			if got := hasFinding(a.Findings, c.name, "research", "alice-jupyter"); got != wantIdle {
				t.Errorf("a finding on research/alice-jupyter in %s: %v, want %v", c.name, got, wantIdle)
			}
		})
	}
	for _, f := range a.Findings.Findings {
		if f.Cluster == "" {
			t.Errorf("finding %s on %s/%s names no cluster", f.Kind, f.Namespace, f.Workload)
		}
		if r := f.Recommendation; r != nil && r.Workload.Cluster != f.Cluster {
			t.Errorf("recommendation for %s in cluster %q, its finding in %q", r.Workload, r.Workload.Cluster, f.Cluster)
		}
	}
	if !slices.Contains(a.Notes, "cluster eu: no cluster access: teams are namespaces, workloads are inferred from pod names") {
		t.Errorf("notes %q do not say cluster eu was not read", a.Notes)
	}
}

func hasFinding(r *findings.Result, cluster, ns, pod string) bool {
	return slices.ContainsFunc(r.Findings, func(f findings.Finding) bool {
		return f.Cluster == cluster && f.Namespace == ns && (f.Pod == pod || slices.Contains(f.Pods, pod))
	})
}

// TestClusterTimelines: each cluster's namespaces over time are its own,
// equal to its store's alone; the same namespace in two clusters is two
// series.
func TestClusterTimelines(t *testing.T) {
	eu := readFixture(t, map[string]string{"cluster": "eu"})
	us := readFixture(t, map[string]string{"cluster": "us"})
	timeline := func(src source.Source, label string) *fleet.Timeline {
		a, err := Run(context.Background(), Options{Source: src, Schema: native.Schema{}, Start: weekStart, End: weekEnd, ClusterLabel: label, TimelinePoints: 7})
		if err != nil {
			t.Fatal(err)
		}
		return a.Timeline
	}
	got := timeline(openStore(t, eu, us), vocab.DefaultClusterLabel)
	alone := *eu
	alone.Labels = nil
	want := timeline(openStore(t, &alone), "")
	if len(got.Namespaces) != 2*len(want.Namespaces) {
		t.Fatalf("%d namespace series, want %d (each cluster's %d)", len(got.Namespaces), 2*len(want.Namespaces), len(want.Namespaces))
	}
	for _, c := range []string{"eu", "us"} {
		var mine []fleet.NamespaceSeries
		for _, x := range got.Namespaces {
			if x.Cluster == c {
				x.Cluster = ""
				mine = append(mine, x)
			}
		}
		if !reflect.DeepEqual(mine, want.Namespaces) {
			t.Errorf("cluster %s's timeline differs from its store's alone", c)
		}
	}
}

// TestClusterOfThePreviousWindow: a cluster that reported last week only
// is still last week's: its GPUs are in the previous window's figures, so
// the change is not read as a drop in the fleet's use.
func TestClusterOfThePreviousWindow(t *testing.T) {
	eu := readFixture(t, map[string]string{"cluster": "eu"})
	us := readFixture(t, map[string]string{"cluster": "us"})
	// Gone two hours before this week began.
	us.End = weekStart.Add(-2 * time.Hour)
	last := us.End.Sub(us.Start)
	us.Allocations = slices.DeleteFunc(us.Allocations, func(a pipelinetest.Allocation) bool { return a.From >= last })
	for i := range us.Allocations {
		if a := &us.Allocations[i]; a.To == 0 || a.To > last {
			a.To = last
		}
	}
	a := run(t, openStore(t, eu, us), vocab.DefaultClusterLabel)
	if !slices.Equal(a.Clusters, []string{"eu", "us"}) {
		t.Fatalf("clusters %q, want eu and us", a.Clusters)
	}
	count := func(r *fleet.Result, c string) int {
		n := 0
		for _, g := range r.GPUs {
			if g.Cluster == c {
				n++
			}
		}
		return n
	}
	if got := count(a.Current, "us"); got != 0 {
		t.Errorf("%d of us's GPUs this week, want 0", got)
	}
	if got, want := count(a.Previous, "us"), len(us.GPUs); got != want {
		t.Errorf("%d of us's GPUs last week, want %d", got, want)
	}
}
