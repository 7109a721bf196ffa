package query

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prometheus/common/model"

	"github.com/gpulens/gpulens/analyzer/fleet"
	"github.com/gpulens/gpulens/analyzer/source"
	"github.com/gpulens/gpulens/internal/promdur"
	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/signals/hami"
)

// ReadHAMi reads every HAMi tenant of [start, end] at step, within sc
// (one cluster of a shared store, as the analysis reads it), through
// signals/hami's forms (both metric eras), each GPU's model and node from
// the exporter beside HAMi (schema's GPU form, joined on the UUID), and
// its physical memory from the exporter's GPUMemoryTotal.
// HAMi's scheduler names a container by its index in the pod, its
// monitor by name: a container's cores are its pod's on that GPU, which
// is exact for the pods with one container on the GPU.
func ReadHAMi(ctx context.Context, q source.Source, sc Scope, schema signals.Schema, start, end time.Time, step time.Duration) ([]fleet.HAMiTenant, error) {
	rng, st := promdur.Format(end.Sub(start)), promdur.Format(step)
	over := func(fn signals.Fn, expr string) string { return signals.Subquery(fn, expr, rng, st) }
	quantile := func(phi float64, expr string) string { return signals.Quantile(phi, expr, rng, st) }
	read := func(expr string) (model.Vector, error) {
		expr, err := sc.apply(expr)
		if err != nil {
			return nil, fmt.Errorf("hami: %w", err)
		}
		v, err := q.Query(ctx, expr, end)
		if err != nil {
			return nil, fmt.Errorf("hami: %w", err)
		}
		return v, nil
	}
	type key struct{ ns, pod, ctr, uuid string }
	tenants := map[key]*fleet.HAMiTenant{}
	keyOf := func(m model.Metric) key {
		return key{string(m["namespace"]), string(m["pod"]), string(m["container"]), string(m["uuid"])}
	}
	limits, err := read(over(signals.MaxOverTime, hami.Sel(hami.ContainerMemoryLimit)))
	if err != nil {
		return nil, err
	}
	for _, s := range limits {
		k := keyOf(s.Metric)
		tenants[k] = &fleet.HAMiTenant{Namespace: k.ns, Pod: k.pod, Container: k.ctr, GPUUUID: k.uuid, MemoryMiB: int64(float64(s.Value)) >> 20}
	}
	if len(tenants) == 0 {
		return nil, nil // no HAMi in the store: one query, no more
	}
	steps := end.Sub(start)/step + 1
	for _, f := range []struct {
		expr string
		set  func(*fleet.HAMiTenant, float64)
	}{
		{quantile(0.99, hami.Sel(hami.ContainerMemoryUsed)), func(t *fleet.HAMiTenant, v float64) { t.MemP99 = v }},
		{over(signals.MaxOverTime, hami.Sel(hami.ContainerMemoryUsed)), func(t *fleet.HAMiTenant, v float64) { t.MemPeak = v }},
		{quantile(0.95, hami.UsedCores()), func(t *fleet.HAMiTenant, v float64) { t.UtilP95 = v }},
		{over(signals.CountOverTime, hami.Sel(hami.ContainerMemoryUsed)), func(t *fleet.HAMiTenant, v float64) { t.Coverage = min(1, v/float64(steps)) }},
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
	// A container's gpucores as HAMi's scheduler allocated it, not over
	// the device's: it is the percent of the GPU's SMs HAMi-core lets the
	// container use (the device plugin sets CUDA_DEVICE_SM_LIMIT to it,
	// pkg/device-plugin/nvidiadevice/nvinternal/plugin/server.go:837 at
	// 4707fb02), while the device's Totalcore is 100 times
	// deviceCoreScaling (register.go:176-177), a scheduling figure. One
	// query reads both: the device's series carry no pod.
	type podKey struct{ ns, pod, uuid string }
	cores, devCores := map[podKey]float64{}, map[string]float64{}
	cv, err := read(signals.Or(over(signals.MaxOverTime, hami.Sel(hami.ContainerCoresAllocated)), over(signals.MaxOverTime, hami.Sel(hami.DeviceCores))))
	if err != nil {
		return nil, err
	}
	for _, s := range cv {
		if _, ok := s.Metric["pod"]; !ok {
			devCores[string(s.Metric["uuid"])] = float64(s.Value)
			continue
		}
		k := podKey{string(s.Metric["namespace"]), string(s.Metric["pod"]), string(s.Metric["uuid"])}
		cores[k] = max(cores[k], float64(s.Value))
	}
	devices := map[string]float64{}
	dv, err := read(over(signals.MaxOverTime, hami.Sel(hami.DeviceMemory)))
	if err != nil {
		return nil, err
	}
	for _, s := range dv {
		devices[string(s.Metric["uuid"])] = float64(s.Value)
	}
	// The device's own memory, beside HAMi's registered size: the
	// exporter reads it from NVML (gpulens-exporter) or as FB_USED +
	// FB_FREE + FB_RESERVED (dcgm-exporter), unscaled.
	physical := map[string]float64{}
	pv, err := read(signals.MaxBy([]string{"uuid"}, over(signals.MaxOverTime, schema.GPUMemoryTotal())))
	if err != nil {
		return nil, err
	}
	for _, s := range pv {
		physical[string(s.Metric["uuid"])] = float64(s.Value)
	}
	gpus := map[string]model.Metric{}
	gv, err := read(signals.MaxBy([]string{"node", "uuid", "model"}, over(signals.MaxOverTime, schema.GPU())))
	if err != nil {
		return nil, err
	}
	for _, s := range gv {
		gpus[string(s.Metric["uuid"])] = s.Metric
	}
	out := make([]fleet.HAMiTenant, 0, len(tenants))
	for k, t := range tenants {
		// HAMi writes whole percents; the ratio read back is 0.29 × 100 =
		// 28.999…, which truncation would make 28.
		t.CoresPct = int64(math.Round(cores[podKey{k.ns, k.pod, k.uuid}] * 100))
		t.DeviceCoresPct = int64(math.Round(devCores[k.uuid] * 100))
		t.DeviceBytes, t.PhysicalBytes = devices[k.uuid], physical[k.uuid]
		if g, ok := gpus[k.uuid]; ok {
			t.Node, t.Model = string(g["node"]), string(g["model"])
		}
		if t.DeviceBytes > 0 {
			out = append(out, *t)
		}
	}
	slices.SortFunc(out, func(a, b fleet.HAMiTenant) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.GPUUUID, b.GPUUUID), cmp.Compare(a.Namespace, b.Namespace),
			cmp.Compare(a.Pod, b.Pod), cmp.Compare(a.Container, b.Container))
	})
	return out, nil
}
