package query

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/schema"
)

// healthExprs are the per-GPU health signals of one schema. They live here
// rather than in schema.Schema because only this package reads them and
// their semantics differ by exporter (a counter per XID code natively, the
// last XID code as a gauge in dcgm-exporter); an empty expression means the
// schema has no such signal and its query is not issued.
type healthExprs struct {
	// down is 1 at every step the GPU was lost or failing.
	down string
	// xid is, per GPU, either the events in the window by xid label
	// (native) or the last non-zero XID code seen (dcgm-exporter).
	xid       string
	xidIsCode bool
	// thermal is 1 while a thermal slowdown (hardware or software) is
	// active and 0 otherwise, per GPU.
	thermal string
}

// DCGM_FI_DEV_CLOCK_THROTTLE_REASONS was renamed CLOCKS_EVENT_REASONS in
// DCGM 3.3; both spellings are in the field. Bits: 0x20 sw thermal
// slowdown, 0x40 hw thermal slowdown.
const dcgmThrottle = `{__name__=~"DCGM_FI_DEV_CLOCK_THROTTLE_REASONS|DCGM_FI_DEV_CLOCKS_EVENT_REASONS"}`

// xidFallenOffBus is XID 79, the GPU has fallen off the bus: in
// dcgm-exporter, which has no up signal, the closest thing to up 0.
const xidFallenOffBus = 79

func (a *analysis) healthFor(sch schema.Schema) healthExprs {
	gpuKey := by(schema.GPUKey)
	switch sch.Name() {
	case schema.NameNative:
		// The exporter creates an XID series with its first event, so
		// increase() would miss that event; the count is the last value
		// minus the value at the window's start, or all of it when the
		// series is new. An exporter restart can only make this an
		// undercount (clamped at 0).
		xid := "gpulens_gpu_xid_errors_total"
		r := a.w.rangeStr()
		return healthExprs{
			down: "min by " + gpuKey + " (gpulens_gpu_up) == bool 0",
			xid: fmt.Sprintf("sum by (node, uuid, xid) (clamp_min(max_over_time(%[1]s[%[2]s]) - (last_over_time(%[1]s[5m] offset %[2]s) or 0 * max_over_time(%[1]s[%[2]s])), 0))",
				xid, r),
			thermal: `max by ` + gpuKey + ` (gpulens_gpu_throttle_active{reason=~".*thermal.*"})`,
		}
	case schema.NameDCGM:
		xid := dcgmGPU("DCGM_FI_DEV_XID_ERRORS")
		bits := dcgmGPU(dcgmThrottle)
		return healthExprs{
			down:      fmt.Sprintf("max by %s (%s) == bool %d", gpuKey, xid, xidFallenOffBus),
			xid:       a.over("last_over_time", "max by "+gpuKey+" ("+xid+") > 0"),
			xidIsCode: true,
			thermal:   fmt.Sprintf("max by %s (clamp_max(floor(%[2]s / 32) %% 2 + floor(%[2]s / 64) %% 2, 1))", gpuKey, bits),
		}
	}
	return healthExprs{}
}

// dcgmGPU renames dcgm-exporter's GPU identity labels to the normalised
// ones, as schema.DCGM does for its own signals.
func dcgmGPU(expr string) string {
	expr = fmt.Sprintf(`label_replace(%s, "node", "$1", "Hostname", "(.+)")`, expr)
	expr = fmt.Sprintf(`label_replace(%s, "node", "$1", "hostname", "(.+)")`, expr)
	return fmt.Sprintf(`label_replace(%s, "uuid", "$1", "UUID", "(.*)")`, expr)
}

// healthQueries are the GPU health queries; each schema issues the same
// number, so that query counts compare across schemas.
func (a *analysis) healthQueries(sch schema.Schema) []namedQuery {
	h := a.healthFor(sch)
	qs := []namedQuery{
		{"gpu down steps", a.over("sum_over_time", h.down), a.gpuValue(func(g *GPU, v float64) { g.DownSteps = int(v) })},
		{"gpu xid errors", h.xid, a.xidApply(h.xidIsCode)},
		{"gpu thermal throttle", a.over("avg_over_time", h.thermal), a.gpuValue(func(g *GPU, v float64) { g.ThermalThrottleRatio = v })},
		{"gpu throttle steps", a.over("count_over_time", h.thermal), a.gpuValue(func(g *GPU, v float64) { g.ThrottleSteps = int(v) })},
	}
	return slices.DeleteFunc(qs, func(q namedQuery) bool { return h.down == "" })
}

func (a *analysis) xidApply(isCode bool) func(*model.Sample) {
	return a.gpu(func(g *GPU, s *model.Sample) {
		v := float64(s.Value)
		code := string(s.Metric["xid"])
		if isCode {
			// Only the last code is known: at least one event.
			code, v = strconv.FormatFloat(v, 'f', -1, 64), 1
		}
		if v <= 0 {
			return
		}
		g.XIDErrors += v
		if code != "" && !slices.Contains(g.XIDCodes, code) {
			g.XIDCodes = append(g.XIDCodes, code)
			slices.SortFunc(g.XIDCodes, func(x, y string) int {
				nx, _ := strconv.Atoi(x)
				ny, _ := strconv.Atoi(y)
				return cmp.Or(cmp.Compare(nx, ny), cmp.Compare(x, y))
			})
		}
	})
}
