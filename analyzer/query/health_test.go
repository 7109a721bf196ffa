package query

import (
	"context"
	"slices"
	"testing"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/gpulens/gpulens/analyzer/schema"
)

// TestDCGMHealth reads dcgm-exporter's health fields: the last-XID gauge
// (a code, not a counter) and the clock-event bitmask, in both of the
// names DCGM has used for it.
func TestDCGMHealth(t *testing.T) {
	dcgm := func(name, host, uuid string) labels.Labels {
		return labels.FromStrings("__name__", name, "Hostname", host, "UUID", uuid, "gpu", "0", "modelName", h100)
	}
	f := newFleet(t)
	// GPU-x: XID 13 at minute 30, then 79 (fallen off the bus) from 181.
	f.series(t, dcgm("DCGM_FI_DEV_XID_ERRORS", "node-1", "GPU-x"), 1, 240, func(i int) float64 {
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
	f.series(t, dcgm("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "node-1", "GPU-x"), 1, 240, func(i int) float64 {
		if i <= 60 {
			return 0x41
		}
		return 0x04
	})
	// GPU-y: the newer field name, sw thermal slowdown (0x20) throughout.
	f.series(t, dcgm("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "node-1", "GPU-y"), 1, 240, constant(0x20))
	f.series(t, dcgm("DCGM_FI_DEV_XID_ERRORS", "node-1", "GPU-y"), 1, 240, constant(0))
	src := f.commit(t)

	res, err := Analyze(context.Background(), src, schema.DCGM{}, window)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]GPU{}
	for _, g := range res.GPUs {
		got[g.UUID] = g
	}
	tests := []struct {
		uuid     string
		down     int
		xid      float64
		codes    []string
		thermal  float64
		thrSteps int
	}{
		{"GPU-x", 60, 1, []string{"79"}, 0.25, 240},
		{"GPU-y", 0, 0, nil, 1, 240},
	}
	for _, tt := range tests {
		g := got[tt.uuid]
		if g.DownSteps != tt.down || g.XIDErrors != tt.xid || !slices.Equal(g.XIDCodes, tt.codes) ||
			g.ThermalThrottleRatio != tt.thermal || g.ThrottleSteps != tt.thrSteps {
			t.Errorf("%s: down %d, xid %v %v, thermal %v over %d steps; want %d, %v %v, %v over %d",
				tt.uuid, g.DownSteps, g.XIDErrors, g.XIDCodes, g.ThermalThrottleRatio, g.ThrottleSteps,
				tt.down, tt.xid, tt.codes, tt.thermal, tt.thrSteps)
		}
	}
}
