package query

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals"

	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/prometheus/common/model"
)

// ClusterValues are the values label takes on the series that identify
// sch's exporter over w, sorted; "" stands for series without it. A store
// of one cluster answers [""], or nothing where it has no data.
//
// It must not miss a cluster: a cluster left out is left out of every
// figure, silently. So it reads every sample of those series once, in
// tiles: at each of about probeSteps instants, last_over_time over the
// tile since the one before, and the window's end on its own (the last
// aligned instant may fall before it). Its peak is one tile's samples, a
// thirtieth of the window's; its cost one pass over the schema's presence
// metrics (gpulens_gpu_info for gpulens's series).
func ClusterValues(ctx context.Context, src source.Source, sch signals.Schema, w fleet.Window, label string) ([]string, error) {
	if !model.LabelName(label).IsValidLegacy() {
		return nil, fmt.Errorf("cluster label %q is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", label)
	}
	w, err := w.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("analysis window: %w", err)
	}
	step := promDuration(max(w.Step, (w.Duration() / probeSteps).Truncate(time.Second)))
	names := sch.Identifying()
	if p, ok := sch.(interface{ Present() []string }); ok {
		names = p.Present()
	}
	if one, ok := unlabelled(ctx, src, names, w, label); ok {
		return one, nil
	}
	q := signals.ClusterValues(label, names, w.SubqueryRange(), step)
	vec, _, err := instantQuery(ctx, src, Scope{}, "clusters", q, w.End)
	if err != nil {
		return nil, fmt.Errorf("analysis query \"clusters\": %w", err)
	}
	var out []string
	for _, s := range vec {
		if !math.IsNaN(float64(s.Value)) {
			out = append(out, string(s.Metric[model.LabelName(label)]))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
