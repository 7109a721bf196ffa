// Package hami reads Project-HAMi's series: the names of both of its
// metric eras, their labels and units, normalised to base units (bytes,
// ratios 0..1) through one table (eras.go); the pod annotation
// hami.io/vgpu-devices-allocated (annotation.go); and the PromQL forms of
// a container's held and used share of its GPU (promql.go), whose output
// names the GPU by signals.LabelUUID so that it joins the exporters'
// series (JoinUUID).
//
// Every name, label and unit is read from HAMi's code at a cited commit;
// docs/research/hami.md quotes each source and says what could not be
// confirmed. Like signals/dcgm it links no Prometheus engine.
package hami
