package findings

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/hami"
)

// HAMiTenant is one container on one GPU shared by HAMi, over a window:
// what it holds (its HAMi resources) and what it used (as HAMi-core
// measured it), in base units.
type HAMiTenant struct {
	Namespace, Pod, Container, Node, GPUUUID, Model string
	// CoresPct is nvidia.com/gpucores (0: unlimited); MemoryMiB the
	// memory limit HAMi-core enforces (gpumem, or gpumem-percentage
	// converted); DeviceBytes the GPU's memory as HAMi's scheduler counts
	// it.
	CoresPct, MemoryMiB int64
	DeviceBytes         float64
	// MemP99 and MemPeak are the memory used, bytes; UtilP95 the SM
	// utilisation of the device, 0..1.
	MemP99, MemPeak, UtilP95 float64
	// Coverage is the share of the window's steps with a reading.
	Coverage float64
}

// HeldShare is the tenant's allocation-basis share of its GPU.
func (t HAMiTenant) HeldShare() float64 {
	return max(float64(t.CoresPct)/100, float64(t.MemoryMiB)*(1<<20)/t.DeviceBytes)
}

// InstantQuerier runs a PromQL instant query (source.Source has it).
type InstantQuerier interface {
	Query(ctx context.Context, q string, ts time.Time) (model.Vector, error)
}

// ReadHAMi reads every HAMi tenant of [start, end] at step through
// signals/hami's forms (both metric eras), each GPU's model and node from
// the exporter beside HAMi (schema's GPU form, joined on the UUID).
// HAMi's scheduler names a container by its index in the pod, its
// monitor by name: a container's cores are its pod's on that GPU, which
// is exact for the pods with one container on the GPU.
func ReadHAMi(ctx context.Context, q InstantQuerier, schema signals.Schema, start, end time.Time, step time.Duration) ([]HAMiTenant, error) {
	rng := fmt.Sprintf("[%ds:%ds]", int64(end.Sub(start)/time.Second), int64(step/time.Second))
	over := func(fn, expr string) string { return fn + "((" + expr + ")" + rng + ")" }
	quantile := func(phi, expr string) string { return "quantile_over_time(" + phi + ", (" + expr + ")" + rng + ")" }
	read := func(expr string) (model.Vector, error) {
		v, err := q.Query(ctx, expr, end)
		if err != nil {
			return nil, fmt.Errorf("hami: %w", err)
		}
		return v, nil
	}
	type key struct{ ns, pod, ctr, uuid string }
	tenants := map[key]*HAMiTenant{}
	keyOf := func(m model.Metric) key {
		return key{string(m["namespace"]), string(m["pod"]), string(m["container"]), string(m["uuid"])}
	}
	limits, err := read(over("max_over_time", hami.Sel(hami.ContainerMemoryLimit)))
	if err != nil {
		return nil, err
	}
	for _, s := range limits {
		k := keyOf(s.Metric)
		tenants[k] = &HAMiTenant{Namespace: k.ns, Pod: k.pod, Container: k.ctr, GPUUUID: k.uuid, MemoryMiB: int64(float64(s.Value)) >> 20}
	}
	steps := end.Sub(start)/step + 1
	for _, f := range []struct {
		expr string
		set  func(*HAMiTenant, float64)
	}{
		{quantile("0.99", hami.Sel(hami.ContainerMemoryUsed)), func(t *HAMiTenant, v float64) { t.MemP99 = v }},
		{over("max_over_time", hami.Sel(hami.ContainerMemoryUsed)), func(t *HAMiTenant, v float64) { t.MemPeak = v }},
		{quantile("0.95", hami.UsedCores()), func(t *HAMiTenant, v float64) { t.UtilP95 = v }},
		{over("count_over_time", hami.Sel(hami.ContainerMemoryUsed)), func(t *HAMiTenant, v float64) { t.Coverage = min(1, v/float64(steps)) }},
	} {
		v, err := read(f.expr)
		if err != nil {
			return nil, err
		}
		for _, s := range v {
			if t := tenants[keyOf(s.Metric)]; t != nil {
				f.set(t, float64(s.Value))
			}
		}
	}
	type podKey struct{ ns, pod, uuid string }
	cores := map[podKey]float64{}
	cv, err := read(over("max_over_time", hami.HeldCores()))
	if err != nil {
		return nil, err
	}
	for _, s := range cv {
		k := podKey{string(s.Metric["namespace"]), string(s.Metric["pod"]), string(s.Metric["uuid"])}
		cores[k] = max(cores[k], float64(s.Value))
	}
	devices := map[string]float64{}
	dv, err := read(over("max_over_time", hami.Sel(hami.DeviceMemory)))
	if err != nil {
		return nil, err
	}
	for _, s := range dv {
		devices[string(s.Metric["uuid"])] = float64(s.Value)
	}
	gpus := map[string]model.Metric{}
	gv, err := read("max by (node, uuid, model) (" + over("max_over_time", schema.GPU()) + ")")
	if err != nil {
		return nil, err
	}
	for _, s := range gv {
		gpus[string(s.Metric["uuid"])] = s.Metric
	}
	out := make([]HAMiTenant, 0, len(tenants))
	for k, t := range tenants {
		t.CoresPct = int64(cores[podKey{k.ns, k.pod, k.uuid}]*100 + 0.5)
		t.DeviceBytes = devices[k.uuid]
		if g, ok := gpus[k.uuid]; ok {
			t.Node, t.Model = string(g["node"]), string(g["model"])
		}
		if t.DeviceBytes > 0 {
			out = append(out, *t)
		}
	}
	sortTenants(out)
	return out, nil
}
