package findings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/vocab"
)

// sharedLoad is what a shared GPU's tenants show of its load when none of
// them shows its own: the highest figure over its tenants and the
// tenants, as "namespace/workload".
type sharedLoad struct {
	load    float64
	measure string // "p95" of the copies, or "average" of the device
	tenants []string
}

// loadUnknowable notes that w's figures on its shared GPUs are the
// device's, not its own: dcgm-exporter's copies give every tenant the
// device's utilization, its default layout pins the device's load on
// whichever tenant the row names at a scrape (the pod label flaps,
// dcgm-exporter #340), and gpulens-exporter without hostPID measures no
// tenant at all. Training-like load there is the GPU's, and which tenant
// runs it cannot be read from the data: an inference tenant beside a
// trainer reads exactly as the trainer does. So no tenant is accused;
// sharedLoadUnknowable says it of the GPU.
func (d *detector) loadUnknowable(w fleet.Workload, subject string, load float64, measure string) {
	if d.shared == nil {
		d.shared = map[fleet.GPUKey]*sharedLoad{}
	}
	for _, k := range w.GPUs {
		s := d.shared[k]
		if s == nil {
			s = &sharedLoad{measure: measure}
			d.shared[k] = s
		}
		if load > s.load {
			s.load, s.measure = load, measure
		}
		if !slices.Contains(s.tenants, subject) {
			s.tenants = append(s.tenants, subject)
		}
	}
}

// sharedLoadUnknowable is the info finding on a shared GPU whose load is
// training-like while no tenant's own load is known.
func (d *detector) sharedLoadUnknowable(g fleet.GPU) {
	s := d.shared[g.GPUKey]
	if s == nil || s.load < d.cfg.Training.MinLoad || g.Coverage < d.cfg.MinCoverage || g.Steps < d.cfg.MinSamples {
		return
	}
	sharing, _, _ := d.sharingOf(g)
	f := Finding{Kind: vocab.KindTrainingOnShared, Severity: Info, Node: g.Node, GPUUUID: g.UUID, Model: g.Model,
		Evidence: map[string]float64{"coverage": g.Coverage, "reported_hours": g.ReportedHours, "gpu_load": s.load,
			"tenant_utilization_unknown": 1, "tenants": float64(len(s.tenants))},
		Confidence: confidence(g.Coverage, 0.5)}
	slices.Sort(s.tenants)
	why := "dcgm-exporter gives its tenants the whole device's figures"
	if s.measure == "average" {
		why = noTenantUtilization
	}
	f.Summary = fmt.Sprintf("%s %s GPU %s on %s ran at %s %s load, training-like, but which of its tenants (%s) runs that load is unknowable from this data (%s): "+
		"no tenant is judged; per-tenant figures (gpulens-exporter with hostPID, or dcgm-exporter's per-process series from 2025 with hostPID) would tell",
		sharing, shortModel(g.Model), g.UUID, g.Node, pct(s.load), s.measure, strings.Join(s.tenants, ", "), why)
	d.cost(&f, g.Model, 1, nil)
	d.add(f)
}
