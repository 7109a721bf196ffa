package findings

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/price"
	"github.com/gpulens/gpulens/vocab"

	"github.com/gpulens/gpulens/analyzer/criteria"
	"github.com/gpulens/gpulens/analyzer/inventory"
	"github.com/gpulens/gpulens/analyzer/recommend"
	"github.com/gpulens/gpulens/analyzer/workload"
)

// Detect runs every rule over res. inv may be nil or unavailable: the
// kinds that need it are then listed in Report.Skipped. prices may be nil:
// every dollar figure is then unknown (CostKnown false), never $0.
func Detect(res *fleet.Result, inv *inventory.Inventory, cfg criteria.Config, prices *price.Prices) *Result {
	d := &detector{res: res, inv: inv, cfg: cfg, prices: prices, report: &Result{Config: cfg, WorkloadSources: map[string]int{}}}
	if res != nil {
		d.gpus = make(map[fleet.GPUKey]*fleet.GPU, len(res.GPUs))
		for i := range res.GPUs {
			d.gpus[res.GPUs[i].GPUKey] = &res.GPUs[i]
		}
		d.readClusterSharing()
		if fields, ok := res.Missing[vocab.SignalThermal]; ok {
			d.skip("needs "+strings.Join(fields, " or ")+", which the data lacks (the GPU Operator's default counters file, dcp-metrics-included.csv, leaves it out)", vocab.KindThermal)
		}
		for _, w := range res.Workloads {
			d.workload(w)
		}
		for _, g := range res.GPUs {
			if UnnamedUseOf(g, cfg).InUse() {
				if d.report.unnamed == nil {
					d.report.unnamed = map[fleet.GPUKey]bool{}
				}
				d.report.unnamed[g.GPUKey] = true
			}
			d.gpu(g)
			d.sharedLoadUnknowable(g)
		}
		d.mixedModels()
	}
	d.hygiene()
	sortFindings(d.report.Findings)
	return d.report
}

type detector struct {
	res    *fleet.Result
	inv    *inventory.Inventory
	cfg    criteria.Config
	prices *price.Prices
	report *Result
	// gpus indexes res.GPUs: every workload and GPU rule looks GPUs up.
	gpus map[fleet.GPUKey]*fleet.GPU
	// clusterShared are the GPUs the data shows held whole and the
	// cluster says are shared (readClusterSharing).
	clusterShared map[fleet.GPUKey]inventory.NodeSharing
	// nodes is each node's use, for the unallocated-capacity rule (nodeUse).
	nodes map[string]nodeUse
	// shared are the shared GPUs whose tenants show the device's load,
	// not their own (loadUnknowable).
	shared map[fleet.GPUKey]*sharedLoad
	// byWorkload indexes res.Allocations by the workload they were
	// grouped into, for judging replicas one by one (podsOf).
	byWorkload map[fleet.WorkloadKey][]int
	// hami indexes res.HAMi by GPU (hamiTenants).
	hami map[hamiGPU][]HAMiTenant
	// absent are the GPUs gone at the window's end from nodes that kept
	// reporting (absenceOf).
	absent map[fleet.GPUKey]fleet.Absence
}

func (d *detector) add(f Finding) { d.report.Findings = append(d.report.Findings, f) }

// skip notes that the check of kinds could not run, and why: one line,
// "kind and kind: why", for checks that judge several kinds from the
// same data.
func (d *detector) skip(why string, kinds ...vocab.Kind) {
	var b strings.Builder
	for i, k := range kinds {
		if i > 0 {
			b.WriteString(" and ")
		}
		b.WriteString(string(k))
	}
	d.report.Skipped = append(d.report.Skipped, b.String()+": "+why)
}

func (d *detector) haveInventory() bool { return d.inv != nil && d.inv.Available }

// cost sets the dollar figures of f: share of a model's GPU, and the
// recommendation's effect.
func (d *detector) cost(f *Finding, model string, share float64, rec *recommend.Recommendation) {
	perHour, err := d.prices.PerHour(model)
	if err != nil {
		f.CostKnown = false
		f.Evidence["price_unknown"] = 1
		f.Summary += fmt.Sprintf(" (cost unknown: %v)", err)
		return
	}
	f.CostKnown = true
	f.MonthlyCostUSD = price.MonthlyCost(share, perHour)
	if rec != nil {
		f.MonthlySavingsUSD = price.MonthlySavings(rec.CurrentShare, rec.RecommendedShare, perHour)
	}
}

// confidence is the evidence's coverage, rounded so goldens stay stable.
func confidence(parts ...float64) float64 {
	c := 1.0
	for _, p := range parts {
		c *= math.Max(0, math.Min(1, p))
	}
	return math.Round(c*100) / 100
}

// podOwner is the owner of a's pod and its GPU resources, resolved as
// every workload verdict resolves its owner (owner: the API's owner
// references, kube-state-metrics' record, the controller's generated form
// of the pod's name); a pod without any is its own owner.
func (d *detector) podOwner(a fleet.Allocation) (workload.Ref, map[vocab.Resource]int64) {
	w, _, res, _ := d.owner(fleet.Workload{WorkloadKey: fleet.WorkloadKey{Ref: workload.Ref{Kind: a.WorkloadKind, Namespace: a.Namespace, Name: a.Workload,
		Container: a.Container}}, Pods: []string{a.Pod}})
	if w.Name == "" {
		w.Kind, w.Name = "Pod", a.Pod
	}
	return w, res
}

func hoursOf(d float64) string {
	if d < 10 {
		return fmt.Sprintf("%.1f h", d)
	}
	return fmt.Sprintf("%.0f h", d)
}

func pct(r float64) string {
	if r < 0.1 && r > 0 {
		return fmt.Sprintf("%.1f%%", 100*r)
	}
	return fmt.Sprintf("%.0f%%", 100*r)
}

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }

// shortModel is the product name without the vendor, for sentences.
func shortModel(m string) string {
	if k, ok := price.LookupModel(m); ok {
		return k.Key
	}
	if m == "" {
		return "GPU"
	}
	return m
}
