package dashboards

import (
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/signals/hami"
	"github.com/gpulens/gpulens/signals/schemas"
	"github.com/gpulens/gpulens/vocab"
)

// chart is one schema's signals (signals/) under the dashboards'
// variables. It holds no PromQL of its own: every expression is the
// schema's, the same the analysis and the rules evaluate, in a scope of
// $cluster (on the store's cluster label) and $node, with the GPU's index
// kept for legends; the per-pod signals also in $namespace and $pod. So a
// dashboard and a report never show a team two utilisations.
type chart struct {
	// name is the --schema name, used in file names and uids.
	name string
	// gpu reads the device signals, pod the tenants', in podScope.
	gpu, pod signals.Schema
	podScope signals.Scope
	// clusterLabel is the store's --cluster-label.
	clusterLabel string
	// rec names the series the schema's rule file records for the
	// per-allocation signals, which the panels read instead of the
	// signals' forms; nil to inline the forms.
	rec *recording
}

// recording is the series a rule file (alerts/) records of the
// per-allocation signals, with the signals' labels.
type recording struct{ allocation, utilization string }

// recorded are the schemas whose per-allocation forms the dashboards read
// from recorded series, by --schema name: dcgm-exporter's attribution
// (the kube-state-metrics joins) is 29 kB an allocation and 50 kB a use,
// and a team dashboard composes a dozen of them, where VictoriaMetrics
// takes 16 KiB a query and kubectl apply 256 KiB a dashboard. They are
// the recordings by dcgm-exporter's own host label, as the other panels
// name nodes. gpulens-exporter's series are per allocation already.
var recorded = map[string]*recording{
	dcgm.Schema{}.Name(): {
		allocation:  vocab.RecordDCGMAllocation + vocab.RecordHostLabelSuffix,
		utilization: vocab.RecordDCGMAllocationUtilization + vocab.RecordHostLabelSuffix,
	},
}

// newChart scopes schema s for the dashboards on a store whose clusters
// are told apart by clusterLabel.
func newChart(s signals.Schema, clusterLabel string) chart {
	sc := signals.Scope{Matchers: clusterMatcher(clusterLabel), Node: "$node", Keep: signals.LabelGPU}
	pod := sc
	pod.Namespace, pod.Pod = "$namespace", "$pod"
	return chart{name: s.Name(), gpu: s.In(sc), pod: s.In(pod), podScope: pod, clusterLabel: clusterLabel, rec: recorded[s.Name()]}
}

// inline is the chart with the per-allocation signals' forms written out
// rather than read recorded: what the recording rules must equal.
func (c chart) inline() chart {
	c.rec = nil
	return c
}

// withoutTenantVars is the chart for a dashboard without the $namespace
// and $pod variables (pod false: without $pod only): Grafana leaves an
// undefined variable as it is, and `pod=~"$pod"` then matches no series,
// so a panel that names one its dashboard lacks is empty
// (TestVariablesDefined).
func (c chart) withoutTenantVars(namespace bool) chart {
	c.podScope.Pod = ""
	if !namespace {
		c.podScope.Namespace = ""
	}
	c.pod = c.pod.In(c.podScope)
	return c
}

// withTeam keeps $team_label (namespace, or a team label relabelling put
// on the series) through the per-pod signals, for the team dashboard.
func (c chart) withTeam() chart {
	c.podScope.KeepTenant = "$team_label"
	c.pod = c.pod.In(c.podScope)
	return c
}

// schemaSet are the sets of dashboards' schemas, by --schema name: one
// per schema of signals/schemas.
var schemaSet = func() map[string]signals.Schema {
	out := map[string]signals.Schema{}
	for _, s := range schemas.All(nil) {
		out[s.Name()] = s
	}
	return out
}()

// Schemas lists the accepted --schema names.
func Schemas() []string { return schemas.Names() }

func (c chart) schema() string { return c.name }

// The variables read the normalised labels through query_result(), so a
// node variable lists dcgm-exporter's hostname and Hostname alike, and the
// namespace and pod variables list tenants, not the exporter's own pod.
func (c chart) clusterValues() string {
	return signals.QueryResult(signals.CountBy([]string{c.clusterLabel}, c.gpu.In(signals.Scope{Keep: c.clusterLabel}).GPU()))
}
func (c chart) nodeValues() string {
	return signals.QueryResult(signals.CountBy([]string{signals.LabelNode}, c.gpu.In(signals.Scope{Matchers: c.clusterMatcher()}).GPU()))
}
func (c chart) namespaceValues() string {
	return signals.QueryResult(signals.CountBy([]string{signals.LabelNamespace}, c.gpu.In(signals.Scope{Matchers: c.clusterMatcher(), Node: "$node"}).MemoryUsed()))
}
func (c chart) podValues() string {
	return signals.QueryResult(signals.CountBy([]string{signals.LabelPod}, c.gpu.In(signals.Scope{Matchers: c.clusterMatcher(), Node: "$node", Namespace: "$namespace"}).MemoryUsed()))
}
func (c chart) clusterMatcher() string { return clusterMatcher(c.clusterLabel) }

// clusterMatcher is the store's cluster label matching $cluster.
func clusterMatcher(label string) string { return string(signals.MatchRe(label, "$cluster")) }

// note is a sentence for the description of a panel that reads the
// signal, where the exporter's default configuration does not emit it.
func (c chart) note(signal string) string { return c.gpu.Note(signal) }

// gpus is 1 per physical GPU that answers: a lost GPU is neither
// allocated nor spare capacity.
func (c chart) gpus() string { return signals.Answering(c.gpu) }

// gpuUtil is each physical GPU's load: the device's utilization, or on
// MIG the slices' activity weighted by their compute share.
func (c chart) gpuUtil() string             { return c.gpu.GPUUtilization() }
func (c chart) migUtil() string             { return c.gpu.MIGUtilization() }
func (c chart) prof(ratio string) string    { return c.gpu.Profiling(ratio) }
func (c chart) migProf(ratio string) string { return c.gpu.MIGProfiling(ratio) }
func (c chart) memUsed() string             { return c.gpu.GPUMemoryUsed() }
func (c chart) memTotal() string            { return c.gpu.GPUMemoryTotal() }
func (c chart) migMemUsed() string          { return c.gpu.MIGMemoryUsed() }
func (c chart) migMemTotal() string         { return c.gpu.MIGMemoryTotal() }
func (c chart) power() string               { return c.gpu.Power() }
func (c chart) temperature() string         { return c.gpu.Temperature() }
func (c chart) clock() string               { return c.gpu.Clock() }
func (c chart) throttle() string            { return c.gpu.Throttle() }
func (c chart) xidEvents() string           { return c.gpu.XIDEventsIn("$__rate_interval") }
func (c chart) eccUncorrected() string      { return c.gpu.ECCUncorrectedIn("$__rate_interval") }
func (c chart) remappedRows() string        { return c.gpu.RemappedRows() }
func (c chart) remapFailed() string         { return c.gpu.RemapFailed() }

// alloc is each container's share of the physical GPU it holds.
func (c chart) alloc() string {
	if c.rec != nil {
		return c.podScope.Recorded(c.rec.allocation)
	}
	return c.pod.Allocation()
}

// used is alloc times the container's measured use of it: its fraction of
// the physical GPU.
func (c chart) used() string { return signals.UsedOf(c.alloc(), c.utilization()) }

// utilization is each container's measured use of its share.
func (c chart) utilization() string {
	if c.rec != nil {
		return c.podScope.Recorded(c.rec.utilization)
	}
	return c.pod.Utilization()
}

// hami are HAMi's tenant forms on the store's $cluster: only joined to
// alloc's containers, so no other scope is needed (signals/hami
// WithHeld, TenantUse).
func (c chart) hami() hami.Forms { return hami.In(signals.Scope{Matchers: c.clusterMatcher()}) }

// held is alloc with each HAMi tenant's share as HAMi holds it (the
// larger of its gpucores and gpumem shares), not the replica the
// exporters see: what the money panels charge, as the ledger does
// (analyzer/fleet ApplyHAMi). Without HAMi's series it is alloc.
func (c chart) held() string { return c.hami().Rescale(c.alloc(), c.alloc()) }

// heldPriced is held at each GPU's price (priced), HAMi's forms once.
func (c chart) heldPriced() string { return c.hami().Rescale(priced(c.alloc()), c.alloc()) }

// heldUsed is held times the container's measured use of it, per step.
// The ledger's use of a HAMi tenant is a window figure (windowUse), which
// the panels that net use over the range read instead.
func (c chart) heldUsed() string { return c.hami().Rescale(c.used(), c.alloc()) }

// heldPacked is held and heldUsed in one vector (signals.Pack), parts
// "held" and "used", HAMi's forms once; a container without a
// utilisation reading used 0.
func (c chart) heldPacked() string {
	return c.hami().Rescale(signals.Pack([2]string{"held", c.alloc()}, [2]string{"used", signals.Or(c.used(), signals.Zeroed(c.alloc()))}), c.alloc())
}

// windowUse is, for UnusedOver, the HAMi tenants' use over the range at
// their GPUs' prices (signals/hami TenantUsed), as the ledger's usage
// basis charges them: HAMi's quantiles over the window, not per-step use.
func (c chart) windowUse() *signals.WindowUse {
	return &signals.WindowUse{Key: hami.TenantKey, Weight: priced(signals.Oned(c.alloc())), Used: c.hami().TenantUsed(rangeVar, analyzerStep)}
}

// podMemUsed is the memory each container uses on its GPU.
func (c chart) podMemUsed() string { return c.pod.MemoryUsed() }
