// Package dcgm describes NVIDIA dcgm-exporter's series as a stock GPU
// Operator install emits and scrapes them, and how to read them in PromQL:
// field and label names, which fields the GPU Operator's default counters
// file enables, the host label's spellings, the XID labels, the
// "which pod is a tenant" rule and the normalisation onto signals' label
// names.
//
// Read from dcgm-exporter's own code (NVIDIA/dcgm-exporter at d5e5f51,
// "Rename Hostname label to hostname (#655)"):
// internal/pkg/rendermetrics/render_metrics.go (the label set),
// internal/pkg/collector/gpu_collector.go (err_code and err_msg on
// DCGM_FI_DEV_XID_ERRORS since 3.3.6-3.4.2), internal/pkg/transformation/
// kubernetes.go (pod, namespace, container; vgpu and pod_uid under
// --kubernetes-virtual-gpus) and etc/dcp-metrics-included.csv (the fields
// the GPU Operator enables by default).
package dcgm

import "slices"

// Fields the project reads, by their names before DCGM 4.7: each is the
// Key of a Field (eras.go), which lists its names in every era. A unit
// here is this name's; every selection normalises to the base unit.
const (
	FBUsed     = "DCGM_FI_DEV_FB_USED"     // MiB
	FBFree     = "DCGM_FI_DEV_FB_FREE"     // MiB
	FBReserved = "DCGM_FI_DEV_FB_RESERVED" // MiB, DCGM 3.1 and later
	GPUUtil    = "DCGM_FI_DEV_GPU_UTIL"    // percent; absent on MIG instances
	// GREngineActive is 0..1 per GPU and per MIG GPU instance.
	GREngineActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
	SMActive       = "DCGM_FI_PROF_SM_ACTIVE"
	SMOccupancy    = "DCGM_FI_PROF_SM_OCCUPANCY"
	TensorActive   = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"
	DRAMActive     = "DCGM_FI_PROF_DRAM_ACTIVE"
	PowerUsage     = "DCGM_FI_DEV_POWER_USAGE"              // W
	TotalEnergy    = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" // mJ, a counter
	GPUTemp        = "DCGM_FI_DEV_GPU_TEMP"                 // °C
	SMClock        = "DCGM_FI_DEV_SM_CLOCK"                 // MHz
	MemClock       = "DCGM_FI_DEV_MEM_CLOCK"                // MHz
	// XIDErrors is a gauge of the last XID code seen (0 before any), with
	// LabelErrCode and LabelErrMsg from 3.3.6-3.4.2 on: each new code is
	// then a new series.
	XIDErrors = "DCGM_FI_DEV_XID_ERRORS"
	// ClockThrottleReasons was renamed ClocksEventReasons in DCGM 3.3;
	// both are in the field. NVML's bitmask.
	ClockThrottleReasons      = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
	ClocksEventReasons        = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
	ECCSBEVolTotal            = "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"
	ECCDBEVolTotal            = "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"
	CorrectableRemappedRows   = "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"
	UncorrectableRemappedRows = "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"
	RowRemapFailure           = "DCGM_FI_DEV_ROW_REMAP_FAILURE"
	// DriverVersion is a label field: it becomes a label of every series.
	DriverVersion = "DCGM_FI_DRIVER_VERSION"
	MemoryTemp    = "DCGM_FI_DEV_MEMORY_TEMP"         // °C
	PCIeReplay    = "DCGM_FI_DEV_PCIE_REPLAY_COUNTER" // a counter
	PCIeTXBytes   = "DCGM_FI_PROF_PCIE_TX_BYTES"      // bytes per second
	PCIeRXBytes   = "DCGM_FI_PROF_PCIE_RX_BYTES"      // bytes per second
)

// Label names dcgm-exporter writes.
const (
	LabelGPU      = "gpu"
	LabelUUID     = "UUID"
	LabelDevice   = "device"
	LabelModel    = "modelName"
	LabelPCIBusID = "pci_bus_id"
	// LabelHostname is the host label of current releases (#655); older
	// ones wrote LabelHostnameOld. --no-hostname leaves both out, and
	// without NODE_NAME it holds the exporter pod's name.
	LabelHostname    = "hostname"
	LabelHostnameOld = "Hostname"
	LabelGPUInstance = "GPU_I_ID"
	LabelMIGProfile  = "GPU_I_PROFILE"
	LabelPod         = "pod"
	LabelNamespace   = "namespace"
	LabelContainer   = "container"
	// LabelVGPU is the device plugin's replica under
	// --kubernetes-virtual-gpus; LabelPodUID marks the 2025 per-process
	// series.
	LabelVGPU   = "vgpu"
	LabelPodUID = "pod_uid"
	// LabelErrCode and LabelErrMsg are on XIDErrors: the code as text and
	// NVIDIA's description of it ("No Error" for 0).
	LabelErrCode = "err_code"
	LabelErrMsg  = "err_msg"
)

// Labels dcgm-exporter adds with --kubernetes-enable-dra
// (KUBERNETES_ENABLE_DRA) to the series of a device that the kubelet's
// pod-resources API lists under a container's dynamic resources, for
// claims of the gpu.nvidia.com driver only: one copy of the device's
// series per container, labelled with the claim and the allocation's
// driver, pool and device (NVIDIA/dcgm-exporter PR #501; names from
// internal/pkg/transformation/const.go at d5e5f51). A MIG device adds its
// profile and MIG UUID; from 4.6.0-4.8.3 (PR #664) these sit on the GPU
// instance's series, before it on the parent GPU's, and a MIG device the
// DRA driver creates at allocation time is not mapped at all (#714).
const (
	LabelDRAClaimName      = "dra_claim_name"
	LabelDRAClaimNamespace = "dra_claim_namespace"
	LabelDRADriverName     = "dra_driver_name"
	LabelDRAPoolName       = "dra_pool_name"
	LabelDRADeviceName     = "dra_device_name"
	LabelDRAMIGProfile     = "dra_mig_profile"
	LabelDRAMIGDeviceUUID  = "dra_mig_device_uuid"
)

// HostLabels are the host label's spellings, newest first.
var HostLabels = []string{LabelHostname, LabelHostnameOld}

// defaultCSV is etc/dcp-metrics-included.csv, the counters file the GPU
// Operator mounts by default: what a stock install emits.
var defaultCSV = []string{
	SMClock, MemClock, MemoryTemp, GPUTemp, PowerUsage, TotalEnergy,
	PCIeReplay, GPUUtil, "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_ENC_UTIL",
	"DCGM_FI_DEV_DEC_UTIL", XIDErrors, FBFree, FBUsed, FBReserved, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
	"DCGM_FI_DEV_VGPU_LICENSE_STATUS", UncorrectableRemappedRows, CorrectableRemappedRows, RowRemapFailure,
	DriverVersion, GREngineActive, TensorActive, DRAMActive, PCIeTXBytes, PCIeRXBytes,
}

// InDefaultCSV says whether a stock GPU Operator install emits field,
// named in any era.
func InDefaultCSV(field string) bool {
	if f, ok := FieldOf(field); ok {
		field = f.Key
	}
	return slices.Contains(defaultCSV, field)
}

// Throttle reason bits of ClockThrottleReasons, NVML's.
const (
	ThrottleSWPowerCap   = 0x4
	ThrottleHWSlowdown   = 0x8
	ThrottleSWThermal    = 0x20
	ThrottleHWThermal    = 0x40
	ThrottleHWPowerBrake = 0x80
)
