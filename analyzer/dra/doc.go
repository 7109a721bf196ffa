// Package dra is the vocabulary the inventory and the recommendations share
// about GPUs allocated through Dynamic Resource Allocation (resource.k8s.io/v1,
// GA since Kubernetes 1.34) by NVIDIA's DRA driver: its device classes, a
// workload's claim and the GPU requests in it, and the MIG profile a CEL
// selector asks for. It links no Kubernetes package, so that
// analyzer/recommend (and what reads its thresholds) stays free of client-go.
package dra
