package session

import (
	"errors"
	"github.com/prometheus/common/model"

	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/pipeline/pipelinetest"
	"github.com/gpulens/gpulens/analyzer/plan"
	"github.com/gpulens/gpulens/analyzer/quota"
	"github.com/gpulens/gpulens/analyzer/source"
)

// twoClusters writes one store holding two clusters of the fleet
// fixture, as Thanos holds them under their external labels: eu is the
// fixture; us has no fine-tuning this week and no idle notebook, so its
// A100 and one H100 are free. It returns the store and each cluster's
// fixture, without its label.
func twoClusters(t *testing.T) (string, map[string]*pipelinetest.Fixture) {
	t.Helper()
	read := func(cluster string) *pipelinetest.Fixture {
		f, err := pipelinetest.Read("../pipeline/testdata/fleet.yaml")
		if err != nil {
			t.Fatal(err)
		}
		f.Labels = map[string]string{"cluster": cluster}
		return f
	}
	eu, us := read("eu"), read("us")
	us.Allocations = slices.DeleteFunc(us.Allocations, func(a pipelinetest.Allocation) bool {
		return a.Pod == "finetune-x2k4p" || a.Pod == "alice-jupyter"
	})
	dir := t.TempDir()
	if err := pipelinetest.WriteAll(dir, eu, us); err != nil {
		t.Fatal(err)
	}
	alone := map[string]*pipelinetest.Fixture{}
	for c, f := range map[string]*pipelinetest.Fixture{"eu": eu, "us": us} {
		g := *f
		g.Labels = nil
		alone[c] = &g
	}
	return dir, alone
}

// quotaCluster answers the inventory as an API server with one
// ResourceQuota of gpus requests.nvidia.com/gpu in namespace training,
// and nothing else: no Kueue, no DRA API, no device plugin config.
func quotaCluster(t *testing.T, gpus int) string {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.Contains(r.URL.Path, "/configmaps/") || strings.HasPrefix(r.URL.Path, "/apis/kueue.x-k8s.io/") ||
			strings.HasPrefix(r.URL.Path, "/apis/resource.k8s.io/"):
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		case r.URL.Path == "/api/v1/resourcequotas":
			fmt.Fprintf(w, `{"metadata":{},"items":[{"metadata":{"name":"gpu","namespace":"training"},"spec":{"hard":{"requests.nvidia.com/gpu":"%d"}}}]}`, gpus)
		default:
			_, _ = w.Write([]byte(`{"metadata":{},"items":[]}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// planAlone is the plan of a store holding only f, unlabelled, read
// without cluster access: what the cluster's own Prometheus would give.
func planAlone(t *testing.T, f *pipelinetest.Fixture) *plan.Plan {
	t.Helper()
	dir := t.TempDir()
	if err := f.Write(dir); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Config{DataDir: dir, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, NoKubernetes: "test", ClusterLabel: "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Plan(context.Background(), PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// poolsOf are cluster's pools of p, their cluster unnamed, as the plan of
// the cluster's own store has them.
func poolsOf(p *plan.Plan, cluster string) []plan.PoolPlan {
	var out []plan.PoolPlan
	for _, pp := range p.Pools {
		if pp.Cluster != cluster {
			continue
		}
		pp.Cluster = ""
		pp.Assignments = slices.Clone(pp.Assignments)
		for i := range pp.Assignments {
			pp.Assignments[i].Workload.Cluster = ""
		}
		out = append(out, pp)
	}
	return out
}

// TestPlanPerCluster: a store of two clusters, each read through its own
// context, is planned cluster by cluster: each cluster's pools are those
// of the plan of its own store alone, named for it, and the totals add
// the clusters up. Its quotas are each cluster's own, advised from the
// GPUs its own namespace held.
func TestPlanPerCluster(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	dir, alone := twoClusters(t)
	cfg := Config{DataDir: dir, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd,
		Contexts: []string{"east=eu", "west=us"}, ClusterLabel: "cluster"}
	cfg.Kubernetes.Kubeconfig = fleetKubeconfigFor(t, map[string]string{"east": quotaCluster(t, 4), "west": quotaCluster(t, 4)})
	cfg.Kubernetes.Timeout = 10 * time.Second
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	p, err := s.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Clusters, []string{"eu", "us"}) {
		t.Fatalf("clusters %q, want eu and us", p.Clusters)
	}
	var gpusToday, gpusNeeded, nodesToday, nodesNeeded, headroom int
	var saving float64
	for _, c := range []string{"eu", "us"} {
		want := planAlone(t, alone[c])
		if got := poolsOf(p, c); !reflect.DeepEqual(got, want.Pools) {
			t.Errorf("cluster %s's pools differ from the plan of its own store:\n got %+v\nwant %+v", c, got, want.Pools)
		}
		// The fixture's six GPUs in each cluster, on three nodes; us's
		// A100 node runs nothing, so its pool needs none of its one node
		// (issue 54: a pool with nothing to place frees its nodes).
		if want.GPUsToday != 6 || want.NodesToday != 3 {
			t.Errorf("cluster %s alone: %d GPUs on %d nodes today, want 6 on 3", c, want.GPUsToday, want.NodesToday)
		}
		gpusToday += want.GPUsToday
		gpusNeeded += want.GPUsNeeded
		nodesToday += want.NodesToday
		nodesNeeded += want.NodesNeeded
		headroom += want.HeadroomGPUs
		saving += want.MonthlySavingUSD
	}
	if p.GPUsToday != 12 || p.GPUsToday != gpusToday || p.GPUsNeeded != gpusNeeded || p.NodesToday != nodesToday ||
		p.NodesNeeded != nodesNeeded || p.HeadroomGPUs != headroom || p.MonthlySavingUSD != saving {
		t.Errorf("totals %d/%d GPUs, %d/%d nodes, %d headroom, $%.0f; want the clusters' sums %d/%d, %d/%d, %d, $%.0f",
			p.GPUsToday, p.GPUsNeeded, p.NodesToday, p.NodesNeeded, p.HeadroomGPUs, p.MonthlySavingUSD,
			gpusToday, gpusNeeded, nodesToday, nodesNeeded, headroom, saving)
	}
	// us runs less than eu: it needs no more GPUs than eu.
	needed := map[string]int{}
	for _, pp := range p.Pools {
		needed[pp.Cluster] += pp.GPUsNeeded
	}
	if needed["us"] > needed["eu"] {
		t.Errorf("us needs %d GPUs, eu %d: us runs a subset of eu's workloads", needed["us"], needed["eu"])
	}
	if slices.ContainsFunc(p.Notes, func(n string) bool {
		return strings.Contains(n, "joined with") || strings.Contains(n, "no cluster access")
	}) {
		t.Errorf("notes %q: each cluster was read and joined with its own inventory", p.Notes)
	}

	advice, notes, err := s.Quotas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// training holds the pretraining H100 all week in both clusters, and
	// in eu the fine-tuning A100 too for half of it (216h to 300h): eu's
	// p95 is 2 GPUs, us's 1; advised ⌈p95 × 1.2⌉.
	want := map[string][3]float64{"eu": {2, 2, 3}, "us": {1, 1, 2}}
	if len(advice) != 2 {
		t.Fatalf("%d quotas advised, want training/gpu of each cluster: %+v", len(advice), advice)
	}
	for i, c := range []string{"eu", "us"} {
		a := advice[i]
		if a.Cluster != c || a.Kind != quota.KindResourceQuota || a.Namespace != "training" || a.Name != "gpu" || a.Quota != 4 {
			t.Errorf("advice %d: %+v, want cluster %s's training/gpu of 4", i, a, c)
		}
		if got := [3]float64{a.Peak, a.P95, float64(a.Advised)}; got != want[c] {
			t.Errorf("cluster %s: peak, p95, advised %v, want %v", c, got, want[c])
		}
	}
	for _, c := range []string{"eu", "us"} {
		if !slices.Contains(notes, "cluster "+c+": Kueue is not installed (no "+inventory.KueueAPI+" API): ResourceQuotas only") {
			t.Errorf("notes %q do not say Kueue is not installed in %s", notes, c)
		}
	}
	if slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "per cluster") || strings.Contains(n, "joined with") }) {
		t.Errorf("notes %q: the quotas were advised per cluster", notes)
	}
}

// TestPlanClusterWithoutContext: a cluster of the store that no context
// maps to is still planned, its workloads inferred from pod names, but
// its quotas are not known, which a note naming it says; the cluster that
// was read is advised.
func TestPlanClusterWithoutContext(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	dir, _ := twoClusters(t)
	cfg := Config{DataDir: dir, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, Contexts: []string{"east=eu"}, ClusterLabel: "cluster"}
	cfg.Kubernetes.Kubeconfig = fleetKubeconfigFor(t, map[string]string{"east": quotaCluster(t, 1)})
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Plan(ctx, PlanOptions{Models: []string{"L4"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Pools) != 2 || p.Pools[0].Cluster != "eu" || p.Pools[1].Cluster != "us" || p.Pools[0].Model != p.Pools[1].Model {
		t.Errorf("pools %+v, want the L4 pool of eu and of us", p.Pools)
	}
	if !slices.Contains(p.Notes, "cluster us: no cluster access: workloads are inferred from pod names") {
		t.Errorf("notes %q do not say us was not read", p.Notes)
	}
	if _, err := s.Plan(ctx, PlanOptions{Models: []string{"B200"}}); err == nil || !strings.Contains(err.Error(), `"B200"`) {
		t.Errorf("a model no cluster has: %v, want an input error naming it", err)
	}

	advice, notes, err := s.Quotas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(advice) != 1 || advice[0].Cluster != "eu" || advice[0].Quota != 1 || advice[0].Advised != 3 {
		t.Errorf("advice %+v, want eu's training/gpu of 1, advised 3", advice)
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "cluster us: no cluster access: the quotas are not known (no --context maps to cluster \"us\"")
	}) {
		t.Errorf("notes %q do not say us's quotas are not known", notes)
	}
}

// TestPlanUnlabelledStore: several contexts over a store without the
// cluster label plan the store as one cluster, as before, and the notes
// say whose inventory it was joined with, and why.
func TestPlanUnlabelledStore(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	cfg := Config{DataDir: fixtureDir(t), Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd,
		Contexts: []string{"west=us-west", "east=us-east"}, ClusterLabel: "cluster"}
	cfg.Kubernetes.Kubeconfig = fleetKubeconfigFor(t, map[string]string{"east": quotaCluster(t, 4), "west": emptyCluster(t)})
	s, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Clusters != nil || slices.ContainsFunc(p.Pools, func(pp plan.PoolPlan) bool { return pp.Cluster != "" }) {
		t.Errorf("clusters %q in a store without the label", p.Clusters)
	}
	why := `joined with cluster us-west (context west)'s inventory only: the store's series carry no "cluster" label`
	if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.HasSuffix(n, why) }) {
		t.Errorf("plan notes %q lack %q", p.Notes, why)
	}
	advice, notes, err := s.Quotas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The primary, us-west, has no quota: us-east's is not joined.
	if len(advice) != 0 || !slices.ContainsFunc(notes, func(n string) bool { return strings.HasSuffix(n, why) }) {
		t.Errorf("advice %+v, notes %q: want none, and the primary's note", advice, notes)
	}
}

// TestPlanClustersNoKubernetes: without cluster access each cluster is
// planned from pod names, and its notes give the reason access was off,
// not another cluster's inventory.
func TestPlanClustersNoKubernetes(t *testing.T) {
	ctx := context.Background()
	dir, _ := twoClusters(t)
	s, err := Open(ctx, Config{DataDir: dir, Start: weekEnd.Add(-6 * time.Hour), End: weekEnd, NoKubernetes: "--no-kubernetes", ClusterLabel: "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Plan(ctx, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"eu", "us"} {
		for _, n := range []string{"no cluster access: workloads are inferred from pod names", "not read from the cluster: --no-kubernetes"} {
			if !slices.Contains(p.Notes, "cluster "+c+": "+n) {
				t.Errorf("notes %q lack %q of cluster %s", p.Notes, n, c)
			}
		}
	}
	advice, _, err := s.Quotas(ctx)
	if !errors.Is(err, ErrNoCluster) || len(advice) != 0 || !strings.Contains(err.Error(), "no cluster access: the quotas are not known (--no-kubernetes") {
		t.Errorf("quotas %+v, %v: want none, and ErrNoCluster saying why", advice, err)
	}
}

// probeCounter counts the queries that read which clusters a store holds.
type probeCounter struct {
	source.Source
	rq source.RangeQuerier
	n  *atomic.Int32
}

func (c probeCounter) Query(ctx context.Context, q string, ts time.Time) (model.Vector, error) {
	if strings.Contains(q, "last_over_time({__name__=") {
		c.n.Add(1)
	}
	return c.Source.Query(ctx, q, ts)
}

func (c probeCounter) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	return c.rq.QueryRange(ctx, q, start, end, step)
}

// TestReportReadsTheClustersOnce: a report is an analysis and a plan of
// one window; the clusters of that window, which cost a read of every
// sample of a series per GPU, are read once for both (and once more for
// the previous window's).
func TestReportReadsTheClustersOnce(t *testing.T) {
	hideKubernetes(t)
	ctx := context.Background()
	dir, _ := twoClusters(t)
	s, err := Open(ctx, Config{DataDir: dir, Start: weekEnd.Add(-7 * 24 * time.Hour), End: weekEnd, ClusterLabel: "cluster", NoKubernetes: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n atomic.Int32
	s.src = probeCounter{Source: s.src, rq: s.src.(source.RangeQuerier), n: &n}
	r, _, err := s.Report(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Clusters) != 2 || r.Consolidation == nil || r.Consolidation.Unavailable != "" {
		t.Fatalf("report of %d clusters, consolidation %+v: want two clusters, planned", len(r.Clusters), r.Consolidation)
	}
	if got := n.Load(); got != 2 {
		t.Errorf("the clusters were read %d times, want 2 (this window once, the previous once)", got)
	}
}
