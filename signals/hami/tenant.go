package hami

import (
	"github.com/gpulens/gpulens/signals"
)

// The forms below charge an exporter's allocation that is a HAMi tenant
// as the analysis does (analyzer/fleet ApplyHAMi, analyzer/query
// ReadHAMi): the exporters see a HAMi GPU time-sliced, each tenant
// holding a replica, where HAMi's limits say what it holds.

// TenantKey joins HAMi's tenants to the exporters' allocations, as
// ApplyHAMi does: a container on a GPU. Both exporters' normalised forms
// name the GPU uuid (dcgm-exporter's UUID renamed), as HAMi's do.
var TenantKey = []string{signals.LabelNamespace, signals.LabelPod, signals.LabelContainer, signals.LabelUUID}

// podKey is a pod on a GPU: HAMi's scheduler names a container by its
// index in the pod, not by name, so a container's cores are its pod's on
// that GPU (exact for a pod with one container on the GPU), as ReadHAMi
// reads them.
var podKey = []string{signals.LabelNamespace, signals.LabelPod, signals.LabelUUID}

// TenantHeld is each HAMi tenant's held share of its GPU at each instant,
// by TenantKey: fleet.HAMiTenant.HeldShare's rule, the larger of its
// pod's cores share and its memory limit over the device's memory. A
// container without a memory limit series is no tenant, as in ReadHAMi.
// ReadHAMi takes the window's largest limits; a pod's HAMi resources are
// immutable, so they are its limits at every instant it runs.
func (f Forms) TenantHeld() string {
	mem := "(" + f.Sel(ContainerMemoryLimit) + " / on (" + signals.LabelUUID + ") group_left () " + f.Sel(DeviceMemory) + ")"
	cores := signals.MaxBy(podKey, f.HeldCores())
	return larger(TenantKey, signals.GroupLeft(mem+" * 0", "+", podKey, nil, cores), mem)
}

// Rescale is x, series with the labels of alloc (an exporter's
// allocations, signals.Schema.Allocation, normalised labels) and values
// proportional to alloc's (alloc itself, its use, or either priced), each
// that is a HAMi tenant scaled by HAMi's held share (TenantHeld) over
// alloc's replica share: a HAMi tenant's allocation at the share HAMi
// holds for it. Every other series is x times 1, the same to the bit, and
// so is all of x where HAMi has no series. x and HAMi's forms are written
// once: x may be a long form, and signals.Priced writes its own twice.
func (f Forms) Rescale(x, alloc string) string {
	// HAMi's share where it has one, else alloc's own, over alloc's: 1
	// (a/a) off HAMi. An allocation of no share is no term of a sum.
	a := signals.MaxBy(TenantKey, alloc)
	factor := "((" + f.TenantHeld() + " or " + a + ") / (" + a + " > 0))"
	return "(" + signals.GroupLeft("("+x+")", "*", TenantKey, nil, factor) + ")"
}

// TenantUsed is each HAMi tenant's use of its GPU over the window rng at
// step, by TenantKey: fleet.HAMiTenant.UsedShare, the larger of HAMi's
// p95 of its SM utilisation and p99 of its memory used over the device's,
// as ReadHAMi reads them. A window figure, not a per-step one: the ledger
// charges a HAMi tenant, of every hour it held, min(held, this).
func (f Forms) TenantUsed(rng, step string) string {
	device := signals.Subquery(signals.MaxOverTime, f.Sel(DeviceMemory), rng, step)
	mem := signals.Quantile(0.99, f.Sel(ContainerMemoryUsed), rng, step) + " / on (" + signals.LabelUUID + ") group_left () " + device
	return larger(TenantKey, signals.Quantile(0.95, f.UsedCores(), rng, step), mem)
}
