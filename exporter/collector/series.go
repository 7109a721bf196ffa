package collector

import (
	"fmt"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Series calls fn for every series of the latest sample with its metric
// name, labels and value, without the cost of a registry Gather (sorting,
// family grouping). The demo uses it to append a simulated week to a TSDB.
// labels and the dto buffer are reused between calls: copy what you keep.
func (s *Sampler) Series(fn func(name string, labels []*dto.LabelPair, value float64)) error {
	r := s.latest.Load()
	if r == nil {
		return nil
	}
	var pb dto.Metric
	for _, m := range r.metrics {
		pb.Reset()
		if err := m.Write(&pb); err != nil {
			return err
		}
		var v float64
		switch {
		case pb.Gauge != nil:
			v = pb.Gauge.GetValue()
		case pb.Counter != nil:
			v = pb.Counter.GetValue()
		default:
			return fmt.Errorf("series of %s: only gauges and counters are built per sample", m.Desc())
		}
		fn(descName(m.Desc()), pb.Label, v)
	}
	return nil
}

// descNames caches the metric name of each Desc: client_golang exposes it
// only through Desc.String.
var descNames sync.Map // *prometheus.Desc -> string

func descName(d *prometheus.Desc) string {
	if n, ok := descNames.Load(d); ok {
		return n.(string)
	}
	str := d.String()
	_, rest, _ := strings.Cut(str, `fqName: "`)
	name, _, _ := strings.Cut(rest, `"`)
	descNames.Store(d, name)
	return name
}
