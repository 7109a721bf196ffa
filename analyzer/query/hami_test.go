package query

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/gpulens/gpulens/signals/native"
)

// TestReadHAMiCoresNotRound (issue 53): gpucores that are not round
// survive HAMi's percent → gpulens's ratio → percent (0.29 × 100 is
// 28.999… in floating point: truncation reads 28), and a container's
// gpucores is its percent of the GPU's SMs whatever HAMi's device counts
// (deviceCoreScaling 2 registers 200). Upstream, Project-HAMi/HAMi at
// 4707fb02: nvidia.com/gpucores is "30% GPU core each physical GPU
// allocates to the pod" (examples/nvidia/default_use.yaml:14), HAMi-core
// enforces it as CUDA_DEVICE_SM_LIMIT = Usedcores
// (pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go:837), and
// the device's Totalcore is deviceCoreScaling × 100
// (plugin/register.go:176-177); the series are
// cmd/scheduler/metrics.go's (the fixture's header names the lines).
//
// Expected by hand from testdata/hami/cores-not-round.prom: GPU a
// (Totalcore 100, 80 GiB) holds cores29 (gpucores 29, gpumem 20 GiB:
// held share max(29/100, 20/80) = 0.29) and cores57 (57, 40 GiB:
// max(0.57, 0.5) = 0.57); GPU b (Totalcore 200) holds b1..b3 (57 each,
// 10 GiB: max(57/200, 10/80) = 0.285; 0.855 of HAMi's device together,
// 171% of the GPU's SMs).
func TestReadHAMiCoresNotRound(t *testing.T) {
	f := newFleet(t)
	f.scrape(t, "testdata/hami/cores-not-round.prom", 1, 90)
	src := f.commit(t)
	tenants, err := ReadHAMi(context.Background(), src, Scope{}, native.Schema{}, t0, minute(120), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	const gib = float64(1 << 30)
	type want struct {
		cores, devCores, memMiB int64
		held, util, peak        float64
	}
	wants := map[string]want{
		"cores29": {29, 100, 20480, 0.29, 0.10, 2 * gib},
		"cores57": {57, 100, 40960, 0.57, 0.30, 8 * gib},
		"b1":      {57, 200, 10240, 0.285, 0.20, 3 * gib},
		"b2":      {57, 200, 10240, 0.285, 0.20, 3 * gib},
		"b3":      {57, 200, 10240, 0.285, 0.20, 3 * gib},
	}
	if len(tenants) != len(wants) {
		t.Fatalf("%d tenants, want %d: %+v", len(tenants), len(wants), tenants)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tn := range tenants {
		w, ok := wants[tn.Pod]
		if !ok {
			t.Errorf("unexpected tenant %+v", tn)
			continue
		}
		if tn.CoresPct != w.cores || tn.DeviceCoresPct != w.devCores || tn.MemoryMiB != w.memMiB {
			t.Errorf("%s: gpucores %d of the device's %d, gpumem %d MiB; want %d of %d, %d MiB", tn.Pod, tn.CoresPct, tn.DeviceCoresPct, tn.MemoryMiB, w.cores, w.devCores, w.memMiB)
		}
		if !near(tn.HeldShare(), w.held) {
			t.Errorf("%s: held share %v, want %v", tn.Pod, tn.HeldShare(), w.held)
		}
		if !near(tn.UtilP95, w.util) || tn.MemPeak != w.peak {
			t.Errorf("%s: utilisation p95 %v, memory peak %v; want %v and %v", tn.Pod, tn.UtilP95, tn.MemPeak, w.util, w.peak)
		}
		if tn.Node != "hami-node" || tn.Model != "NVIDIA A100-SXM4-80GB" || tn.DeviceBytes != 80*gib || tn.PhysicalBytes != 80*gib {
			t.Errorf("%s: node %q model %q, HAMi's size %v, the device's %v; want hami-node, the A100-80GB, 80 GiB both", tn.Pod, tn.Node, tn.Model, tn.DeviceBytes, tn.PhysicalBytes)
		}
	}
}
