// Package sim simulates a fleet of GPU nodes so that the real exporter,
// kubelet attribution and analyzer run without GPUs.
//
// A Scenario (YAML, see testdata/default.yaml) lists nodes, how their GPUs
// are shared (whole, time-slicing, MPS, MIG), which pods hold them with
// which workload profile, and faults to inject. Parse validates it and
// reports every problem with its file, line and field path.
//
// NewNode builds one node's simulator on go-nvml's own mock servers
// (pkg/nvml/mock/server with the go-nvml GPU configs, plus an L4 config
// defined here). NodeSim.Interface is an nvml.Interface: the exporter's
// NVML reader runs on it unchanged. Values come from workload models
// (Evaluate) at the simulated time set with NodeSim.Advance:
//
//   - training: a plateau with small noise and periodic checkpoint dips;
//   - inference: diurnal, peaking at 14:00 UTC, quieter at night and on
//     weekends;
//   - notebook: idle, holding memory, with rare short bursts;
//   - batch: jobs of tens of minutes, on or off;
//   - leak: memory grows linearly until the process dies of OOM and
//     restarts.
//
// Noise is a hash of (seed, pod, time bucket), never a stateful RNG: the
// value at a time does not depend on how often or in what order the
// simulator is sampled, and two simulators with the same seed agree
// exactly. UUIDs, PCI bus IDs, PIDs, pod UIDs and container IDs are
// likewise derived from the seed and names.
//
// Device aggregation follows NVML: a time-sliced or MPS GPU's utilization
// is the capped sum of its tenants' and its memory the sum of their
// processes'; a MIG parent reports no utilization, its instances report
// their processes and GPM per instance. GPM (Hopper and Blackwell only) is
// computed from cumulative counters, so GpmMetricsGet averages over the
// interval between two samples. Faults make a GPU lost
// (ERROR_GPU_IS_LOST), hang (calls block until Close) or raise XID events
// on registered event sets; XID 79 also loses the GPU.
//
// NodeSim.Pods and NodeSim.Devices expose what the device plugin and the
// kubelet would know: pod UIDs, container IDs, host PIDs, device-plugin IDs
// (GPU-<uuid>, GPU-<uuid>::<n>, MIG-<uuid>) and resource names. On a DRA
// node (dra: true) pods hold their GPU or MIG instance through a
// ResourceClaim instead, named as NVIDIA's DRA driver names its devices
// (gpu-<minor>, gpu-<minor>-mig-<profile>-<id>-<placement>); pods that name
// one claim share its device.
package sim
