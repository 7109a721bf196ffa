package fleet

import (
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/gpulens/gpulens/signals"
)

// kubeState writes, for every pod running on the node at ts, the
// container series kube-state-metrics would have (namespace, pod,
// container, uid; docs/metrics/workload/pod-metrics.md): its restarts,
// and once it has restarted, why and with what code it last ended. The
// simulated containers restart only when a leak runs its GPU out of
// memory, and a CUDA out-of-memory error ends a process with exit code 1,
// which the kubelet reports as reason Error (OOMKilled is a cgroup's host
// memory, which no simulated pod exhausts).
func (n *node) kubeState(ts time.Time, sink Sink) error {
	for _, p := range n.backend.Node().Pods() {
		lbls := []*dto.LabelPair{pair("container", p.Container), pair("namespace", p.Namespace), pair("pod", p.Name), pair("uid", p.UID)}
		if err := sink.Append(ts, signals.ContainerRestarts, lbls, float64(p.Restarts)); err != nil {
			return err
		}
		if p.Restarts == 0 {
			continue
		}
		if err := sink.Append(ts, signals.ContainerLastTerminatedExitCode, lbls, 1); err != nil {
			return err
		}
		if err := sink.Append(ts, signals.ContainerLastTerminatedReason, append(lbls, pair("reason", "Error")), 1); err != nil {
			return err
		}
	}
	return sink.EndStep(ts)
}
