// Package sliceindex is the node-scoped ResourceSlice informer: it follows
// the ResourceSlices that a GPU DRA driver publishes for this node and
// resolves the (driver, pool, device) a claim names to the device's
// attributes, from which attribution finds the GPU or MIG instance in the
// NVML snapshot.
//
// Like podindex it runs a bare shared informer over a cache.ListerWatcher of
// its own cut-down API types (apitypes.go), on a REST client that knows
// resource.k8s.io/v1 only, so the exporter links neither k8s.io/api nor a
// typed clientset.
package sliceindex
