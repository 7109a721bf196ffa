package session

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/source"
)

// TestMemoryActivity: each GPU's memory activity over the window, as
// gpulens-exporter writes it (gpulens_gpu_dram_active_ratio, the GPM
// ratio; gpulens_mig_dram_active_ratio of a MIG instance), scraped every
// 5 minutes into the fixture fleet's store. By hand: GPU-mem-a moves
// memory 30% of the time all week, 0.30; GPU-mem-b is quiet for the first
// half and at 10% for the second, 0.05 on average; instance 3 of GPU-mem-m
// at 20%, 0.20 under its key "GPU-mem-m/3".
func TestMemoryActivity(t *testing.T) {
	ctx := context.Background()
	dir := fixtureDir(t)
	db, err := source.OpenEmbedded(dir, source.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gpu := func(uuid string) labels.Labels {
		return labels.FromStrings("__name__", "gpulens_gpu_dram_active_ratio", "node", "n-mem", "uuid", uuid, "model", "NVIDIA H100 80GB HBM3", "gpu", "0")
	}
	mig := labels.FromStrings("__name__", "gpulens_mig_dram_active_ratio", "node", "n-mem", "uuid", "GPU-mem-m", "model", "NVIDIA H100 80GB HBM3",
		"gpu_instance", "3", "mig_profile", "1g.10gb", "gpu", "1")
	start := weekEnd.Add(-7 * 24 * time.Hour)
	app := db.Appender(ctx)
	for ts := start; !ts.After(weekEnd); ts = ts.Add(5 * time.Minute) {
		b := 0.0
		if ts.Sub(start) >= 84*time.Hour {
			b = 0.1
		}
		for _, s := range []struct {
			l labels.Labels
			v float64
		}{{gpu("GPU-mem-a"), 0.3}, {gpu("GPU-mem-b"), b}, {mig, 0.2}} {
			if _, err := app.Append(0, s.l, ts.UnixMilli(), s.v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := app.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := db.PersistHead(ctx); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, Config{DataDir: dir, Start: start, End: weekEnd, NoKubernetes: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.MemoryActivity(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]float64{"GPU-mem-a": 0.30, "GPU-mem-b": 0.05, "GPU-mem-m/3": 0.20} {
		if v, ok := got[key]; !ok || math.Abs(v-want) > 0.002 {
			t.Errorf("%s: %v (read %v), want %.2f", key, v, ok, want)
		}
	}
}
