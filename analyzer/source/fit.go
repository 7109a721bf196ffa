package source

import (
	"context"
	"fmt"
	"time"

	"github.com/gpulens/gpulens/internal/promdur"
	"github.com/gpulens/gpulens/signals/dcgm"
)

// FitDCGM is d fitted to a store that holds names in [start, end]
// (dcgm.Schema.Fit), read as of mixed counters files where some GPU
// there reports only another tenant field than the one Fit chose: a
// fleet whose node pools run dcgm-exporter with different counters files
// (one trimmed to GR_ENGINE_ACTIVE) holds FB_USED, and Fit alone would
// read every GPU's presence from it, losing the trimmed nodes' GPUs.
// One instant query, asked only where the store holds another tenant
// field's name.
func FitDCGM(ctx context.Context, src Source, d dcgm.Schema, names []string, start, end time.Time) (dcgm.Schema, error) {
	d = d.Fit(names)
	expr, ok := d.MixedProbe(names, promdur.Format(end.Sub(start)))
	if !ok {
		return d, nil
	}
	v, err := src.Query(ctx, expr, end)
	if err != nil {
		return d, fmt.Errorf("asking whether dcgm-exporter's counters files differ between GPUs: %w", err)
	}
	if len(v) > 0 && v[0].Value > 0 {
		d.MixedNames = d.MixedNamesOf(names)
	}
	return d, nil
}
