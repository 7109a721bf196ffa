package schemas

import (
	"slices"
	"testing"
)

// Every schema is found by its name, names are unique, and each says the
// traits the shard planner and the analysis plan by: a reader never needs
// to ask a schema's name.
func TestRegistry(t *testing.T) {
	names := Names()
	if len(names) < 2 || len(slices.Compact(slices.Sorted(slices.Values(names)))) != len(names) {
		t.Fatalf("names %v: want at least two, unique", names)
	}
	for _, name := range names {
		s, err := ByName(name, nil)
		if err != nil || s.Name() != name {
			t.Fatalf("ByName(%q) = %v, %v", name, s, err)
		}
		tr := s.Traits()
		if len(tr.HostLabels) == 0 || tr.PointsPerSeriesStep <= 0 {
			t.Errorf("%s: traits %+v: want host labels and a cost per series and step", name, tr)
		}
	}
	if _, err := ByName("nvidia-smi", nil); err == nil {
		t.Error("ByName of an unknown schema: no error")
	}
}
