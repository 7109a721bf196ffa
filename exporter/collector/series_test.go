package collector

import (
	"context"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

func TestSeriesMatchesExposition(t *testing.T) {
	s := New(Options{Backend: &fakeBackend{snap: testSnapshot()}, Node: "node-a", SkipExposition: true})
	if err := s.SampleOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.latest.Load().encoded != nil {
		t.Error("SkipExposition still encoded the exposition")
	}
	count := map[string]int{}
	var up0 int
	err := s.Series(func(name string, lbls []*dto.LabelPair, v float64) {
		count[name]++
		if name == "gpulens_gpu_up" && v == 0 {
			for _, l := range lbls {
				if l.GetName() == "gpu" && l.GetValue() == "3" {
					up0++
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if count["gpulens_gpu_up"] != 4 || count["gpulens_mig_info"] != 2 || count["gpulens_gpu_throttle_active"] != 9 {
		t.Errorf("series counts %v", count)
	}
	if up0 != 1 {
		t.Errorf("lost GPU 3 not reported as up 0 with its labels")
	}
}
