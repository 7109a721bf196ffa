package query

import (
	"reflect"
	"testing"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"

	"github.com/prometheus/common/model"
)

// TestAllocationKeyIsItsLabels: the struct the analysis keys allocations by
// and the label list its PromQL groups them by are one idea; each label of
// the list sets one field, and there is no field the labels do not set but
// Cluster, which a cluster's analysis leaves empty and MergeClusters sets.
func TestAllocationKeyIsItsLabels(t *testing.T) {
	if n := reflect.TypeFor[fleet.AllocationKey]().NumField(); n != len(signals.AllocationKeyLabels)+1 {
		t.Fatalf("AllocationKey has %d fields, signals.AllocationKeyLabels %d labels and Cluster", n, len(signals.AllocationKeyLabels))
	}
	seen := map[fleet.AllocationKey]string{}
	for _, l := range signals.AllocationKeyLabels {
		k := allocationKey(model.Metric{model.LabelName(l): "x"})
		if k == (fleet.AllocationKey{}) {
			t.Errorf("label %s sets no field of AllocationKey", l)
		}
		if other, dup := seen[k]; dup {
			t.Errorf("labels %s and %s set the same field", other, l)
		}
		seen[k] = l
	}
}
