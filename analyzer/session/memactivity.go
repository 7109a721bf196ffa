package session

import (
	"context"
	"fmt"

	"github.com/gpulens/gpulens/internal/promdur"
	"github.com/gpulens/gpulens/signals"
)

// MemoryActivity is each GPU's average memory activity over the session's
// window (signals.MemoryActivity), for the reclaimer: by GPU UUID, and by
// "UUID/gpu_instance" for a MIG instance. It is empty where the store holds
// no memory activity (an exporter without profiling metrics): the caller
// then judges by utilisation alone, and says so.
func (s *Session) MemoryActivity(ctx context.Context) (map[string]float64, error) {
	if s.schemaErr != nil {
		return nil, s.schemaErr
	}
	sch := s.schema
	out := map[string]float64{}
	d, ok := sch.(signals.Device)
	if !ok {
		return out, nil
	}
	whole, mig := signals.MemoryActivity(d, promdur.Format(s.window.End.Sub(s.window.Start)), promdur.Format(s.window.Step))
	for _, q := range []struct {
		expr string
		key  func(uuid, instance string) string
	}{
		{whole, func(uuid, _ string) string { return uuid }},
		{mig, func(uuid, instance string) string { return uuid + "/" + instance }},
	} {
		v, err := s.src.Query(ctx, q.expr, s.window.End)
		if err != nil {
			return nil, fmt.Errorf("memory activity: %w", err)
		}
		for _, smp := range v {
			out[q.key(string(smp.Metric[signals.LabelUUID]), string(smp.Metric[signals.LabelGPUInstance]))] = float64(smp.Value)
		}
	}
	return out, nil
}
