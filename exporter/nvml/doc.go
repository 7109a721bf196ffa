// Package nvml is the exporter's NVML backend: it reads every GPU of the node
// through a go-nvml Interface (the real libnvidia-ml, or a mock server such as
// the simulator's) into the gpu.Snapshot model.
//
// Each Sample reads all devices in parallel, one goroutine per device, and
// bounds every device by Options.CallTimeout. A device that does not answer
// in time, or that NVML reports lost, comes back as Up=false with its last
// known identity while the other devices carry on. A device whose previous
// read is still blocked is not read again until that read returns, so a hung
// GPU costs one goroutine, never one per interval. New sets the devices up
// the same way, so a GPU hung at start-up does not hang the exporter.
//
// In MIG mode the processes are listed per MIG device, with their GPU and
// compute instance ids, rather than on the parent GPU, which would list them
// again. Per-process SM utilization comes from the parent's process
// utilization samples and is NA where NVML keeps none (MIG).
//
// Error policy: NVML_ERROR_NOT_SUPPORTED (and FUNCTION_NOT_FOUND on drivers
// that predate a call) yields gpu.NA without complaint. Any other failure
// yields gpu.NA, is logged at debug level and is counted in Snapshot.Errors
// under the C function name (e.g. "nvmlDeviceGetPowerUsage"). A panic raised
// by a call, which go-nvml's mocks do for every method they leave unset, is
// recovered and counted the same way, so an incomplete mock degrades one
// value instead of crashing the exporter.
//
// Profiling ratios (SM active, SM occupancy, tensor active, DRAM active) come
// from GPM on Hopper and newer, per GPU and per MIG GPU instance. GPM reports
// the activity between two samples, so the first Sample after start (or after
// a failed read) reports them as NA. XID critical errors are counted by a
// background event listener started by New.
//
// go-nvml binds libnvidia-ml through cgo, so this package (and every
// package importing go-nvml, its mocks included) needs CGO_ENABLED=1 to
// build; the library itself is only loaded at run time, by Open.
package nvml
