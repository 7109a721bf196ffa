package query

import (
	"context"
	"slices"
	"testing"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/signals/dcgm"

	"github.com/prometheus/prometheus/model/labels"
)

// TestDCGMHealth reads dcgm-exporter's health fields: the last-XID gauge
// (a code, not a counter: an event is a change of it within the window) and the clock-event bitmask, in both of the
// names DCGM has used for it.
func TestDCGMHealth(t *testing.T) {
	dcgmSeries := func(name, host, uuid string) labels.Labels {
		return labels.FromStrings("__name__", name, "Hostname", host, "UUID", uuid, "gpu", "0", "modelName", h100)
	}
	f := newFleet(t)
	// GPU-x: XID 13 at minute 30, then 79 (fallen off the bus) from 181.
	f.series(t, dcgmSeries("DCGM_FI_DEV_XID_ERRORS", "node-1", "GPU-x"), 1, 240, func(i int) float64 {
		switch {
		case i > 180:
			return 79
		case i >= 30:
			return 13
		}
		return 0
	})
	// 0x41: hw thermal slowdown and gpu idle, for the first hour; then
	// 0x04 (sw power cap), not thermal.
	f.series(t, dcgmSeries("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "node-1", "GPU-x"), 1, 240, func(i int) float64 {
		if i <= 60 {
			return 0x41
		}
		return 0x04
	})
	// GPU-y: the newer field name, sw thermal slowdown (0x20) throughout.
	f.series(t, dcgmSeries("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "node-1", "GPU-y"), 1, 240, constant(0x20))
	f.series(t, dcgmSeries("DCGM_FI_DEV_XID_ERRORS", "node-1", "GPU-y"), 1, 240, constant(0))
	// GPU-z: XID 48 (a double-bit ECC error) from before the window: the
	// gauge never changes inside it, so no event of this window.
	f.series(t, dcgmSeries("DCGM_FI_DEV_XID_ERRORS", "node-1", "GPU-z"), -30, 240, constant(48))
	// GPU-w: 31 at minute 10, back to 0, then 31 again at minute 100 and 48
	// at 200: three changes to a code, two of them the application's.
	f.series(t, dcgmSeries("DCGM_FI_DEV_XID_ERRORS", "node-1", "GPU-w"), 1, 240, func(i int) float64 {
		switch {
		case i >= 200:
			return 48
		case i >= 100:
			return 31
		case i >= 10 && i < 50:
			return 31
		}
		return 0
	})
	src := f.commit(t)

	res, err := Analyze(context.Background(), src, dcgm.Schema{}, window)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]fleet.GPU{}
	for _, g := range res.GPUs {
		got[g.UUID] = g
	}
	tests := []struct {
		uuid     string
		down     int
		xid      float64
		codes    []string
		appXID   float64
		appCodes []string
		thermal  float64
		thrSteps int
	}{
		// 13 at minute 30 is the application's; 79 at 181 the GPU's.
		{"GPU-x", 60, 1, []string{"79"}, 1, []string{"13"}, 0.25, 240},
		{"GPU-y", 0, 0, nil, 0, nil, 1, 240},
		{"GPU-z", 0, 0, nil, 0, nil, 0, 0},
		{"GPU-w", 0, 1, []string{"48"}, 2, []string{"31"}, 0, 0},
	}
	for _, tt := range tests {
		g := got[tt.uuid]
		if g.DownSteps != tt.down || g.XIDErrors != tt.xid || !slices.Equal(g.XIDCodes, tt.codes) ||
			g.WorkloadXIDErrors != tt.appXID || !slices.Equal(g.WorkloadXIDCodes, tt.appCodes) ||
			g.ThermalThrottleRatio != tt.thermal || g.ThrottleSteps != tt.thrSteps {
			t.Errorf("%s: down %d, xid %v %v, app xid %v %v, thermal %v over %d steps; want %d, %v %v, %v %v, %v over %d",
				tt.uuid, g.DownSteps, g.XIDErrors, g.XIDCodes, g.WorkloadXIDErrors, g.WorkloadXIDCodes, g.ThermalThrottleRatio, g.ThrottleSteps,
				tt.down, tt.xid, tt.codes, tt.appXID, tt.appCodes, tt.thermal, tt.thrSteps)
		}
	}
}
