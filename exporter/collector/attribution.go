package collector

import (
	"github.com/gpulens/gpulens/exporter/attribution"
	"github.com/gpulens/gpulens/exporter/attribution/podindex"
	"github.com/gpulens/gpulens/exporter/attribution/sliceindex"
	"github.com/gpulens/gpulens/exporter/gpu"
	"github.com/gpulens/gpulens/exporter/podresources"
	"github.com/gpulens/gpulens/vocab"
)

// Attribution is where a Sampler gets what it needs to attribute a sample
// to pods. Every source is read from memory: the kubelet client and the
// pod informer refresh themselves in the background, so attributing adds
// no kubelet or API call to a collection, let alone to a scrape.
type Attribution struct {
	// Allocations returns the latest pod-resources answer, nil while the
	// kubelet is unreachable.
	Allocations func() *podresources.Allocations
	// Pods is the node's pod index; nil without API access.
	Pods podindex.Index
	// Slices resolves devices allocated through ResourceClaims; nil while
	// the node's ResourceSlices are not read (see attribution.Input).
	Slices sliceindex.Index
	// ProcRoot is the host's /proc, "" when per-process attribution is off.
	ProcRoot string
	// SharedMode is time-slicing or mps (see attribution.Input).
	SharedMode vocab.Sharing
	// Changed, when set, is signalled when Allocations starts or stops
	// returning nil (podresources.Client.Changed): the Sampler then
	// attributes its latest sample again instead of waiting for the next.
	Changed <-chan struct{}

	resolver attribution.Resolver
}

func (a *Attribution) attribute(node string, snap *gpu.Snapshot) *AttributionState {
	allocs := a.Allocations()
	recs, stats := a.resolver.Attribute(attribution.Input{
		Node: node, Snapshot: snap, Allocations: allocs, Pods: a.Pods, Slices: a.Slices, ProcRoot: a.ProcRoot, SharedMode: a.SharedMode,
	})
	return &AttributionState{KubeletUp: allocs != nil, Containers: recs, Stats: stats}
}
