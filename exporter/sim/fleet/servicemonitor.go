package fleet

import (
	"time"

	dto "github.com/prometheus/client_model/go"
)

// ServiceMonitorSink stores a node's series as Prometheus does when a
// prometheus-operator ServiceMonitor with honorLabels: false scrapes the
// node's exporter pod: every label the exporter set that the target also
// has is renamed exported_<name>, the target's labels are added, and
// Prometheus's up is written for the target at each step
// (scrape.mutateSampleLabels; the operator's target labels are namespace,
// pod, container, service, endpoint, job and instance). honorLabels: false
// is dcgm-exporter's own chart default (deployment/values.yaml:132,
// templates/service-monitor.yaml:33-38, port "metrics" on 9400:
// templates/service.yaml:33-37, values.yaml:114; NVIDIA/dcgm-exporter
// d5e5f51), and the exporter's pod, namespace and container labels
// (transformation/const.go:21-23) are exactly the ones that collide, so a
// tenant's come back as exported_pod etc. (dcgm-exporter #340).
type ServiceMonitorSink struct {
	inner  Sink
	target []*dto.LabelPair
	buf    []*dto.LabelPair
}

// NewServiceMonitorSink relabels for the target with the given labels,
// in front of inner; Close closes inner.
func NewServiceMonitorSink(inner Sink, target [][2]string) *ServiceMonitorSink {
	s := &ServiceMonitorSink{inner: inner}
	for _, l := range target {
		s.target = append(s.target, &dto.LabelPair{Name: &l[0], Value: &l[1]})
	}
	return s
}

// ExporterTarget is the target labels of an exporter pod on node, as the
// operator sets them for a Service named job in namespace.
func ExporterTarget(namespace, job, container, port, node string) [][2]string {
	return [][2]string{
		{"namespace", namespace}, {"pod", job + "-" + node}, {"container", container},
		{"service", job}, {"endpoint", "metrics"}, {"job", job}, {"instance", node + ":" + port},
	}
}

// Append implements Sink.
func (s *ServiceMonitorSink) Append(ts time.Time, name string, lbls []*dto.LabelPair, v float64) error {
	s.buf = s.buf[:0]
	for _, l := range lbls {
		if s.isTarget(l.GetName()) {
			if l.GetValue() == "" {
				continue // an empty label is no label: nothing to keep
			}
			exported := "exported_" + l.GetName()
			s.buf = append(s.buf, &dto.LabelPair{Name: &exported, Value: l.Value})
			continue
		}
		s.buf = append(s.buf, l)
	}
	s.buf = append(s.buf, s.target...)
	return s.inner.Append(ts, name, s.buf, v)
}

func (s *ServiceMonitorSink) isTarget(name string) bool {
	for _, t := range s.target {
		if t.GetName() == name {
			return true
		}
	}
	return false
}

// EndStep implements Sink.
func (s *ServiceMonitorSink) EndStep(ts time.Time) error {
	if err := s.inner.Append(ts, "up", s.target, 1); err != nil {
		return err
	}
	return s.inner.EndStep(ts)
}

// Close implements Sink.
func (s *ServiceMonitorSink) Close() error { return s.inner.Close() }
