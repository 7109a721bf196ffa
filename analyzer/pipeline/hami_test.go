package pipeline

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/ledger"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/signals/native"
	"github.com/gpulens/gpulens/vocab"
)

var (
	hamiEnd   = time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
	hamiStart = hamiEnd.Add(-24 * time.Hour)
	hamiStep  = 5 * time.Minute
)

// simulateHAMi writes sc's fleet, its exporter's and HAMi's series, into
// db as a scrape of cluster would (no cluster label where it is "").
func simulateHAMi(t *testing.T, db *source.Embedded, sc *sim.Scenario, cluster string) {
	t.Helper()
	ctx := context.Background()
	var n atomic.Int64
	target := func(job, instance string) fleet.Sink {
		tsdb := fleet.NewTSDBSink(ctx, db, &n)
		if cluster == "" {
			return tsdb.WithTarget(job, instance)
		}
		// A cluster's external label, as its Prometheus adds it.
		return fleet.NewServiceMonitorSink(tsdb, [][2]string{{"cluster", cluster}, {"job", job}, {"instance", instance}})
	}
	newSink := func(node string) fleet.Sink {
		return fleet.NewHAMiSink(target("gpulens-exporter", node+":9845"), target("hami-vgpu-monitor", node+":9394"), sc, node)
	}
	if err := fleet.Run(ctx, fleet.Options{Scenario: sc, Start: hamiStart, End: hamiEnd, Step: hamiStep}, newSink); err != nil {
		t.Fatal(err)
	}
}

func openEmpty(t *testing.T) *source.Embedded {
	t.Helper()
	db, err := source.OpenEmbedded(t.TempDir(), source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// TestHAMiClustersAreApart: two clusters of one store run the same HAMi
// node, pods and GPU UUIDs; in us, embed-api holds gpumem 10GiB rather
// than 40. Each cluster's HAMi tenants are those of its own store alone,
// named for it; its findings are its own (embed-api is oversized in eu
// only); and the ledger charges each tenant on its own cluster's GPU, at
// its own cluster's share.
func TestHAMiClustersAreApart(t *testing.T) {
	load := func(embedMemory sim.ByteSize) *sim.Scenario {
		sc, err := sim.Load("testdata/hami-clusters.yaml")
		if err != nil {
			t.Fatal(err)
		}
		for i := range sc.Nodes[0].Pods {
			if p := &sc.Nodes[0].Pods[i]; p.Name == "embed-api" {
				p.HAMi.Memory = embedMemory
			}
		}
		return sc
	}
	scs := map[string]*sim.Scenario{"eu": load(40 << 30), "us": load(10 << 30)}
	shared := openEmpty(t)
	for c, sc := range scs {
		simulateHAMi(t, shared, sc, c)
	}
	prices := price.DefaultPrices()
	runHAMi := func(src source.Source, label string) *Analysis {
		a, err := Run(context.Background(), Options{Source: src, Schema: native.Schema{}, Start: hamiStart, End: hamiEnd, Step: hamiStep,
			ClusterLabel: label, Prices: prices})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := runHAMi(shared, vocab.DefaultClusterLabel)
	if !reflect.DeepEqual(a.Clusters, []string{"eu", "us"}) {
		t.Fatalf("clusters %q, want eu and us", a.Clusters)
	}
	if len(a.Current.HAMi) != 8 {
		t.Errorf("%d HAMi tenants, want 4 in each cluster: %+v", len(a.Current.HAMi), a.Current.HAMi)
	}
	l := ledger.Build(a.Current, prices)
	if l.Orphans != 0 {
		t.Errorf("%d tenants charged on no GPU", l.Orphans)
	}
	for c, sc := range scs {
		t.Run(c, func(t *testing.T) {
			alone := openEmpty(t)
			simulateHAMi(t, alone, sc, "")
			want := runHAMi(alone, "")
			want.Current.SetCluster(c)
			if got := a.Current.OfCluster(c).HAMi; len(got) != 4 || !reflect.DeepEqual(got, want.Current.HAMi) {
				t.Errorf("HAMi tenants differ from the cluster's own store:\n got %+v\nwant %+v", got, want.Current.HAMi)
			}
			oversized := false
			for _, f := range a.Findings.Findings {
				if f.Cluster == c && f.Kind == findings.KindHAMiGPUMemOversized && f.Pod == "embed-api" {
					oversized = true
				}
			}
			if wantOversized := c == "eu"; oversized != wantOversized {
				t.Errorf("embed-api oversized in %s: %v, want %v", c, oversized, wantOversized)
			}
			// embed-api holds max(30%, 40/80) of its A100 in eu, max(30%,
			// 10/80) in us; every GPU is charged its own cluster's two.
			wantShare := map[string]float64{"eu": 0.5, "us": 0.3}[c]
			gpus := 0
			for _, g := range l.GPUs {
				if g.Cluster != c {
					continue
				}
				gpus++
				hami := 0
				for _, x := range g.Tenants {
					if x.Mode != ledger.ModeHAMi {
						continue
					}
					hami++
					if x.Pod == "embed-api" && x.Share != wantShare {
						t.Errorf("embed-api charged a share %v in %s, want %v", x.Share, c, wantShare)
					}
				}
				if hami != 2 {
					t.Errorf("GPU %s of %s: %d HAMi tenants, want 2: %+v", g.UUID, c, hami, g.Tenants)
				}
			}
			if gpus != 2 {
				t.Errorf("%d GPUs in %s's ledger, want 2", gpus, c)
			}
		})
	}
}
