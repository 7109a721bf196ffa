// Package collector turns the GPU snapshots that a gpu.Backend samples in
// the background into Prometheus series.
//
// The expensive part of an exporter, talking to NVML and the kubelet, never
// runs on the scrape path: a Sampler samples on its own interval and rebuilds
// the complete list of const metrics once per sample (as kube-state-metrics
// rebuilds an object's series when it changes). A scrape only hands that
// prebuilt list to the encoder, so its cost is that of encoding static
// series, and a slow or hung GPU can never make a scrape slow.
//
// Each family of series lives in its own file with its own builder, as
// node_exporter keeps one collector per file.
package collector
