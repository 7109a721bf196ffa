// Package schema maps the analysis's logical signals onto the series of a
// particular exporter, so the same analysis runs on gpulens's native series
// and on NVIDIA dcgm-exporter's.
//
// Every expression a Schema returns is an instant-vector PromQL expression
// whose output carries normalised labels: per allocation node, namespace,
// pod, container, uuid, gpu_instance, model, mig_profile and sharing (see
// AllocationLabels); per physical GPU node, uuid and model (GPULabels).
// Callers aggregate them inside the engine and never see exporter-specific
// label names.
package schema
