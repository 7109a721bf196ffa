// Package gpu holds what the exporter knows about the GPUs of one node at one
// instant: the Snapshot a Backend samples in the background and the collector
// encodes on scrape. It has no dependency on NVML so that every backend (nvml,
// sim, a future dcgm) and every consumer shares one vocabulary.
package gpu

import (
	"context"
	"math"
	"time"
)

// Backend samples every GPU of the node. Implementations must never block
// longer than the context allows: a hanging GPU is reported as down in the
// snapshot, not by hanging Sample.
type Backend interface {
	// Name is the value of --backend (nvml, sim).
	Name() string
	// Sample reads every device. It returns an error only when nothing at
	// all could be read (the library is gone); a single failing GPU is a
	// Device with Up=false.
	Sample(ctx context.Context) (*Snapshot, error)
	// Close releases the library. Sample must not be called afterwards.
	Close() error
}

// NA marks a value the device does not report (unsupported, MIG mode, no GPM).
// The collector emits no series for it rather than a misleading zero.
var NA = math.NaN()

// Valid reports whether v was read (is not NA).
func Valid(v float64) bool { return !math.IsNaN(v) }

// Snapshot is one full sample of the node.
type Snapshot struct {
	Time          time.Time
	DriverVersion string
	CUDAVersion   string // "12.4"
	NVMLVersion   string
	Devices       []Device
	// Errors counts failed library calls during this sample, by call name
	// (e.g. "nvmlDeviceGetPowerUsage"). NOT_SUPPORTED is not an error.
	Errors map[string]int
}

// Device is one physical GPU. Ratios are 0–1, memory in bytes, power in
// watts, energy in joules, clocks in hertz: the units of the exposition.
type Device struct {
	Index    int
	UUID     string // GPU-...
	Model    string // NVML product name, e.g. "NVIDIA H100 80GB HBM3"
	PCIBusID string // 0000:3b:00.0
	MIGMode  bool
	// MIGComputeSlices is the GPU's total of MIG compute slices, the
	// largest GPU instance profile NVML offers (7 on A100 and Hopper, 4 on
	// A30); 0 when unknown or not in MIG mode.
	MIGComputeSlices int

	// Up is false when the device could not be read (lost, hung, ...).
	// All other fields except identity are NA/zero then.
	Up  bool
	Err string // why Up is false, for logs and /healthz

	Utilization       float64 // GPU busy ratio (NVML utilization.gpu)
	MemoryUtilization float64 // memory-controller busy ratio

	// GPM profiling ratios (Hopper and newer); NA when unsupported or on the
	// first sample (GPM needs two samples).
	SMActive     float64
	SMOccupancy  float64
	TensorActive float64
	DRAMActive   float64

	MemoryUsedBytes     float64
	MemoryTotalBytes    float64
	MemoryReservedBytes float64

	PowerWatts   float64
	EnergyJoules float64 // monotonic since driver load
	TemperatureC float64
	SMClockHz    float64
	MemClockHz   float64

	// ThrottleReasons is NVML's clocks-event-reasons bitmask.
	ThrottleReasons uint64
	ThrottleValid   bool

	ECCCorrected   float64 // aggregate (lifetime) counts
	ECCUncorrected float64

	RemappedRowsCorrectable   float64
	RemappedRowsUncorrectable float64
	RemappedRowsPending       bool
	RemappedRowsFailure       bool
	RemappedRowsValid         bool

	// XIDErrors counts XID events seen since the exporter started, by XID code.
	XIDErrors map[uint64]uint64

	Instances []Instance // MIG instances, empty unless MIGMode
	Processes []Process  // compute processes, whole device and all instances
}

// Instance is a MIG device (GPU instance + compute instance).
type Instance struct {
	// Index is the MIG device index on the parent
	// (nvmlDeviceGetMigDeviceHandleByIndex), what the device plugin's index
	// strategy calls "0:<index>".
	Index             int
	UUID              string // MIG-...
	GPUInstanceID     int
	ComputeInstanceID int
	Profile           string // "1g.10gb"
	// Slices is the number of compute slices (of 7 on A100/H100/H200) and
	// MemorySlices the memory eighths, for allocation shares.
	Slices       int
	MemorySlices int

	MemoryUsedBytes  float64
	MemoryTotalBytes float64

	// GPM per-instance ratios, NA when unsupported.
	SMActive     float64
	SMOccupancy  float64
	TensorActive float64
	DRAMActive   float64
}

// Process is a compute process on the device, as NVML reports it. PID is a
// host PID. GPUInstanceID/ComputeInstanceID are -1 outside MIG.
type Process struct {
	PID               uint32
	GPUInstanceID     int
	ComputeInstanceID int
	MemoryUsedBytes   float64
	// SMUtilization is the process's SM ratio from process utilization
	// samples; NA when NVML gave no sample for it (MIG, or idle since last).
	SMUtilization float64
}

// Throttle reason bits (nvmlClocksEventReason*), named as exposed in the
// reason label. Kept here so the collector and backends agree without
// importing NVML.
var ThrottleReasonNames = []struct {
	Bit  uint64
	Name string
}{
	{0x1, "gpu_idle"},
	{0x2, "applications_clocks_setting"},
	{0x4, "sw_power_cap"},
	{0x8, "hw_slowdown"},
	{0x10, "sync_boost"},
	{0x20, "sw_thermal_slowdown"},
	{0x40, "hw_thermal_slowdown"},
	{0x80, "hw_power_brake_slowdown"},
	{0x100, "display_clock_setting"},
}
