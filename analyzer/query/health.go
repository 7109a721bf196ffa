package query

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/schema"
)

// healthQueries are the GPU health queries; each schema issues the same
// number, so that query counts compare across schemas.
func (a *analysis) healthQueries(sch schema.Schema) []namedQuery {
	h := sch.Health(a.window())
	qs := []namedQuery{
		{name: "gpu down steps", expr: a.over("sum_over_time", h.Down), apply: a.gpuValue(func(g *GPU, v float64) { g.DownSteps = int(v) })},
		{name: "gpu xid errors", expr: h.XIDEvents, apply: a.gpu(xidApply)},
		{name: "gpu thermal throttle", expr: a.over("avg_over_time", h.Thermal), apply: a.gpuValue(func(g *GPU, v float64) { g.ThermalThrottleRatio = v })},
		{name: "gpu throttle steps", expr: a.over("count_over_time", h.Thermal), apply: a.gpuValue(func(g *GPU, v float64) { g.ThrottleSteps = int(v) })},
	}
	return slices.DeleteFunc(qs, func(q namedQuery) bool { return h.Down == "" })
}

// xidApply adds one code's events to the GPU's faults, or to its
// workload errors when the code is one an application causes.
func xidApply(g *GPU, s *model.Sample) {
	v, code := float64(s.Value), string(s.Metric["xid"])
	if v <= 0 {
		return
	}
	n, codes := &g.XIDErrors, &g.XIDCodes
	if schema.ApplicationXID(code) {
		n, codes = &g.WorkloadXIDErrors, &g.WorkloadXIDCodes
	}
	*n += v
	if code != "" && !slices.Contains(*codes, code) {
		*codes = append(*codes, code)
		slices.SortFunc(*codes, func(x, y string) int {
			nx, _ := strconv.Atoi(x)
			ny, _ := strconv.Atoi(y)
			return cmp.Or(cmp.Compare(nx, ny), cmp.Compare(x, y))
		})
	}
}
