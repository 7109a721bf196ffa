package pipeline

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gpulens/gpulens/analyzer/findings"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/exporter/sim"
	"github.com/gpulens/gpulens/exporter/sim/fleet"
	"github.com/gpulens/gpulens/signals/dcgm"
	"github.com/gpulens/gpulens/vocab"
)

// TestHAMiTenantsBeforeFindings (issue 53 item 4): the analysis reads
// HAMi's tenants before its findings, so a HAMi GPU its exporter maps no
// pod to is held by them, not "showed no pod", and an 80 GiB GPU that
// deviceMemoryScaling 1.5 registers as 120 GiB is overcommitted by its
// tenants' 96 GiB. testdata/hami-scaled.yaml is
// analyzer/findings/testdata/hami/scaled.yaml (whose tests give the
// sources); dcgm-exporter maps no pod to the GPUs here
// (DCGMInstall.RenamedSharedResource stands in for an exporter that cannot
// read HAMi's "<UUID>-<n>" device IDs). At main the findings ran before
// HAMi's series were read: both GPUs "showed no pod", and the overcommit
// was compared with 120 GiB.
func TestHAMiTenantsBeforeFindings(t *testing.T) {
	sc, err := sim.Load("testdata/hami-scaled.yaml")
	if err != nil {
		t.Fatal(err)
	}
	db := openEmpty(t)
	ctx := context.Background()
	var n atomic.Int64
	newSink := func(node string) fleet.Sink {
		d := fleet.NewDCGMSink(fleet.NewTSDBSink(ctx, db, &n).WithTarget("dcgm-exporter", node+":9400"))
		d.Install.RenamedSharedResource = true
		return fleet.NewHAMiSink(d, fleet.NewTSDBSink(ctx, db, &n).WithTarget("hami-vgpu-monitor", node+":9394"), sc, node)
	}
	if err := fleet.Run(ctx, fleet.Options{Scenario: sc, Start: hamiStart, End: hamiEnd, Step: hamiStep}, newSink); err != nil {
		t.Fatal(err)
	}
	a, err := Run(ctx, Options{Source: db, Schema: dcgm.Schema{}, Start: hamiStart, End: hamiEnd, Step: hamiStep, Prices: price.DefaultPrices()})
	if err != nil {
		t.Fatal(err)
	}
	overcommit := 0
	for _, f := range a.Findings.Findings {
		t.Logf("%s %s: %s", f.Kind, f.GPUUUID, f.Summary)
		if f.Kind == vocab.KindUnallocated && strings.Contains(f.Summary, "showed no pod") {
			t.Errorf("a GPU HAMi names tenants on showed no pod: %s", f.Summary)
		}
		if f.Kind == vocab.KindUnallocated && strings.Contains(f.Summary, "scale the node down") {
			t.Errorf("a node HAMi's tenants hold is advised scaled down: %s", f.Summary)
		}
		if f.Kind == findings.KindHAMiOvercommit && strings.Contains(f.Summary, "96.0 GiB of 80.0 GiB") {
			overcommit++
		}
	}
	if overcommit != 1 {
		t.Errorf("%d overcommit findings of 96 GiB over 80 GiB, want 1", overcommit)
	}
}
