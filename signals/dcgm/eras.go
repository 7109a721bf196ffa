package dcgm

import (
	"math"
	"slices"
	"strings"
)

// Era is a naming era of dcgm-exporter's series. A field keeps its
// meaning across eras; its name, and for some its unit, change.
type Era int

// The eras, oldest first. Sources:
//   - NVIDIA/DCGM at 72fa3fe (DCGM 4.6.0), dcgmlib/dcgm_fields.h: the block
//     "Deprecated: renamed per DCGM Field Naming Standard" (lines 3601-3700)
//     defines each old name as an alias of its new one, for example
//     "#define DCGM_FI_DEV_GPU_UTIL DCGM_FI_DEV_GPU_UTIL_RATIO // 203", and
//     line 584 "#define DCGM_FI_DEV_CLOCK_THROTTLE_REASONS
//     DCGM_FI_DEV_CLOCKS_EVENT_REASONS" (the DCGM 3.3 rename).
//   - dcgmlib/dcgm_field_naming.py at the same commit: the grammar
//     prefix_domain_subsystem_property[_unit][_suffix], units BYTES,
//     CELSIUS, HERTZ, JOULES, SECONDS, WATTS, suffixes RATIO and TOTAL.
//   - NVIDIA/go-dcgm at b7fa315 (DCGM 4.6.1), pkg/dcgm/dcgm_fields.h: the
//     base-unit fields 1600-1612 that replace legacy ones, among them
//     DCGM_FI_DEV_SM_CLOCK_HERTZ (1603), DCGM_FI_DEV_MEMORY_CLOCK_HERTZ
//     (1604) and DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL (1611, joules).
//   - dcgm-exporter's release notes: 4.9.0 (DCGM 4.7.0) "Rename the 23
//     default and profiling-preset fields that DCGM 4.7 deprecates to
//     their new DCGM 4.7 names. Eleven of them also change unit", renames
//     the DCGM_FI_DRIVER_VERSION label and collects
//     DCGM_FI_DEV_FB_CAPACITY_BYTES; 4.10.0 (30 Nov 2026) renames
//     DCGM_FI_PROF_PCIE_TX_BYTES and its three siblings to
//     *_BYTES_PER_SECOND, still bytes per second.
//
// No public snapshot of dcgm-exporter after d5e5f51 (4.8.2) nor of DCGM
// after 4.6.1 was available, so no file lists 4.9.0's 23 names. The
// framebuffer's byte names (DCGM 4.7 ids 1626-1628) were seen only in a
// third-party write-up of DCGM 4.7's field reference: they are marked
// Inferred, as they also follow the naming standard. A pipeline that
// names them otherwise maps them with --dcgm-fields. The research, with
// every source: docs/research/dcgm-eras.md.
const (
	// EraDCGM3 is before DCGM 3.3: DCGM_FI_DEV_CLOCK_THROTTLE_REASONS.
	EraDCGM3 Era = iota
	// EraLegacy is DCGM 3.3 to 4.6 and dcgm-exporter up to 4.8: the names
	// this package's constants spell, in their counters files' units
	// (MiB, percent, MHz, mJ).
	EraLegacy
	// Era49 is dcgm-exporter 4.9.0 on DCGM 4.7: the naming standard's
	// names, in base units (bytes, 0..1 ratios, hertz, joules).
	Era49
	// Era410 is dcgm-exporter 4.10.0: Era49 with the PCIe and NVLink
	// byte counters renamed *_BYTES_PER_SECOND.
	Era410
)

func (e Era) String() string {
	switch e {
	case EraDCGM3:
		return "before DCGM 3.3"
	case EraLegacy:
		return "dcgm-exporter before 4.9"
	case Era49:
		return "dcgm-exporter 4.9"
	case Era410:
		return "dcgm-exporter 4.10"
	}
	return "unknown era"
}

// A Spelling is one name of a field, the first era that emits it, and the
// factor that turns its values into the field's base unit.
type Spelling struct {
	Name  string
	Since Era
	// Scale times a value is the value in the field's Unit.
	Scale float64
	// Inferred marks a name no public file confirms: read from the naming
	// standard's convention (the unit in the name), see Era.
	Inferred bool
}

// A Field is one quantity dcgm-exporter reports, under every name it had.
// Key is the name before DCGM 4.7 (this package's constants), which the
// code uses to refer to the field.
type Field struct {
	Key  string
	Unit string // the base unit every spelling is normalised to
	// Spellings, newest first: where two are seen for one series at one
	// moment (a node upgraded without staleness markers), the newest wins.
	Spellings []Spelling
}

// Units, as Field.Unit states them.
const (
	UnitBytes   = "bytes"
	UnitRatio   = "ratio"
	UnitHertz   = "hertz"
	UnitJoules  = "joules"
	UnitWatts   = "watts"
	UnitCelsius = "celsius"
	UnitCode    = "code"    // a code or a bitmask, no unit
	UnitCount   = "count"   // a number of events or rows
	UnitBytesPS = "bytes/s" // bytes per second
)

const mibBytes = 1 << 20

// fields is every field gpulens reads, in every era. A spelling that
// changed unit scales to the base one: the legacy MiB by 2^20, percent by
// 1/100, MHz by 10^6, mJ by 1/1000.
var fields = []Field{
	{FBUsed, UnitBytes, []Spelling{{"DCGM_FI_DEV_FB_USED_BYTES", Era49, 1, true}, {FBUsed, EraDCGM3, mibBytes, false}}},
	{FBFree, UnitBytes, []Spelling{{"DCGM_FI_DEV_FB_FREE_BYTES", Era49, 1, true}, {FBFree, EraDCGM3, mibBytes, false}}},
	{FBReserved, UnitBytes, []Spelling{{"DCGM_FI_DEV_FB_RESERVED_BYTES", Era49, 1, true}, {FBReserved, EraDCGM3, mibBytes, false}}},
	{GPUUtil, UnitRatio, []Spelling{{"DCGM_FI_DEV_GPU_UTIL_RATIO", Era49, 1, false}, {GPUUtil, EraDCGM3, 0.01, false}}},
	{GREngineActive, UnitRatio, []Spelling{{"DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", Era49, 1, false}, {GREngineActive, EraDCGM3, 1, false}}},
	{SMActive, UnitRatio, []Spelling{{"DCGM_FI_PROF_SM_UTIL_RATIO", Era49, 1, false}, {SMActive, EraDCGM3, 1, false}}},
	{SMOccupancy, UnitRatio, []Spelling{{"DCGM_FI_PROF_SM_OCCUPANCY_RATIO", Era49, 1, false}, {SMOccupancy, EraDCGM3, 1, false}}},
	{TensorActive, UnitRatio, []Spelling{{"DCGM_FI_PROF_TENSOR_UTIL_RATIO", Era49, 1, false}, {TensorActive, EraDCGM3, 1, false}}},
	{DRAMActive, UnitRatio, []Spelling{{"DCGM_FI_PROF_DRAM_UTIL_RATIO", Era49, 1, false}, {DRAMActive, EraDCGM3, 1, false}}},
	{PowerUsage, UnitWatts, []Spelling{{"DCGM_FI_DEV_BOARD_POWER_WATTS", Era49, 1, false}, {PowerUsage, EraDCGM3, 1, false}}},
	{TotalEnergy, UnitJoules, []Spelling{{"DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", Era49, 1, false}, {TotalEnergy, EraDCGM3, 0.001, false}}},
	{GPUTemp, UnitCelsius, []Spelling{{"DCGM_FI_DEV_GPU_TEMP_CELSIUS", Era49, 1, false}, {GPUTemp, EraDCGM3, 1, false}}},
	{SMClock, UnitHertz, []Spelling{{"DCGM_FI_DEV_SM_CLOCK_HERTZ", Era49, 1, false}, {SMClock, EraDCGM3, 1e6, false}}},
	{MemClock, UnitHertz, []Spelling{{"DCGM_FI_DEV_MEMORY_CLOCK_HERTZ", Era49, 1, false}, {MemClock, EraDCGM3, 1e6, false}}},
	{XIDErrors, UnitCode, []Spelling{{"DCGM_FI_DEV_XID_ERROR", Era49, 1, false}, {XIDErrors, EraDCGM3, 1, false}}},
	// The bitmask was renamed by DCGM 3.3; the naming standard's grammar
	// already fits CLOCKS_EVENT_REASONS, and no later name is known.
	{ClockThrottleReasons, UnitCode, []Spelling{{ClocksEventReasons, EraLegacy, 1, false}, {ClockThrottleReasons, EraDCGM3, 1, false}}},
	{ECCSBEVolTotal, UnitCount, []Spelling{{ECCSBEVolTotal, EraDCGM3, 1, false}}},
	{ECCDBEVolTotal, UnitCount, []Spelling{{ECCDBEVolTotal, EraDCGM3, 1, false}}},
	{CorrectableRemappedRows, UnitCount, []Spelling{{"DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL", Era49, 1, false}, {CorrectableRemappedRows, EraDCGM3, 1, false}}},
	{UncorrectableRemappedRows, UnitCount, []Spelling{{"DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL", Era49, 1, false}, {UncorrectableRemappedRows, EraDCGM3, 1, false}}},
	{RowRemapFailure, UnitCode, []Spelling{{"DCGM_FI_DEV_ROW_REMAP_FAILED", Era49, 1, false}, {RowRemapFailure, EraDCGM3, 1, false}}},
	{MemoryTemp, UnitCelsius, []Spelling{{"DCGM_FI_DEV_MEMORY_TEMP_CELSIUS", Era49, 1, false}, {MemoryTemp, EraDCGM3, 1, false}}},
	{PCIeReplay, UnitCount, []Spelling{{"DCGM_FI_DEV_PCIE_REPLAY_TOTAL", Era49, 1, false}, {PCIeReplay, EraDCGM3, 1, false}}},
	{PCIeTXBytes, UnitBytesPS, []Spelling{{PCIeTXBytes + "_PER_SECOND", Era410, 1, false}, {PCIeTXBytes, EraDCGM3, 1, false}}},
	{PCIeRXBytes, UnitBytesPS, []Spelling{{PCIeRXBytes + "_PER_SECOND", Era410, 1, false}, {PCIeRXBytes, EraDCGM3, 1, false}}},
}

// Fields lists every field gpulens reads, in every era.
func Fields() []Field { return slices.Clone(fields) }

// FieldOf is the field a name (any era's) spells, and whether it is one.
func FieldOf(name string) (Field, bool) {
	for _, f := range fields {
		for _, sp := range f.Spellings {
			if sp.Name == name {
				return f, true
			}
		}
	}
	return Field{}, false
}

// spellings is field's names, newest first; a name the table lacks is its
// only spelling, at scale 1.
func spellings(field string) []Spelling {
	for _, f := range fields {
		if f.Key == field {
			return f.Spellings
		}
	}
	return []Spelling{{Name: field, Scale: 1}}
}

// NameIn is field's name in era e: the newest spelling no newer than e.
func NameIn(field string, e Era) string {
	for _, sp := range spellings(field) {
		if sp.Since <= e {
			return sp.Name
		}
	}
	sp := spellings(field)
	return sp[len(sp)-1].Name
}

// Emitted is what an exporter of era e writes for field at value v, given
// in the field's Key unit (the legacy one): its name, and the value in
// that name's unit. The emulator's one point of translation.
func Emitted(field string, v float64, e Era) (string, float64) {
	name := NameIn(field, e)
	var legacy, now float64 = 1, 1
	for _, sp := range spellings(field) {
		if sp.Name == field {
			legacy = sp.Scale
		}
		if sp.Name == name {
			now = sp.Scale
		}
	}
	switch r := legacy / now; {
	case r == 1:
		return name, v
	case r < 1 && 1/r == math.Trunc(1/r):
		// As the selection divides: the same float either way.
		return name, v / (1 / r)
	default:
		return name, v * r
	}
}

// Names is every name of field, newest first.
func Names(field string) []string {
	var out []string
	for _, sp := range spellings(field) {
		out = append(out, sp.Name)
	}
	return out
}

// namesRegex matches every name of each field, for a presence selector:
// the names' common prefix once, then the rest as alternatives, which
// keeps the allocation's many presence selectors within
// VictoriaMetrics' query length.
func namesRegex(m *FieldMap, fields ...string) string {
	var all []string
	for _, f := range fields {
		all = append(all, m.namesOf(f)...)
	}
	return regexOf(all)
}

// regexOf matches the names all, as namesRegex writes it.
func regexOf(all []string) string {
	if len(all) == 1 {
		return all[0]
	}
	prefix := all[0]
	for _, n := range all[1:] {
		for !strings.HasPrefix(n, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	rest := make([]string, len(all))
	for i, n := range all {
		rest[i] = n[len(prefix):]
	}
	return prefix + "(" + strings.Join(rest, "|") + ")"
}

// DriverVersionLabels are the driver label's spellings, newest first:
// DCGM 4.7 renamed the label field DCGM_FI_DRIVER_VERSION to
// DCGM_FI_SYSTEM_DRIVER_VERSION (dcgm_fields.h at 72fa3fe, line 3605).
var DriverVersionLabels = []string{"DCGM_FI_SYSTEM_DRIVER_VERSION", DriverVersion}

// dcgm-exporter 4.9 also collects DCGM_FI_DEV_FB_CAPACITY_BYTES by default
// (its release notes); gpulens does not read it: used + free + reserved
// is the same figure in every era.

// compat1x is dcgm-exporter's 1.x-compatible names (--use-old-namespace,
// -o) of the fields gpulens reads, in the same units as the fields' names
// before DCGM 4.7: NVIDIA/dcgm-exporter d5e5f51,
// etc/1.x-compatibility-metrics.csv (the names) and go-dcgm b7fa315
// pkg/dcgm/const_fields.go legacyDCGMFields (each name's field ID). The
// 4.9.0 release deprecates that file. Those series name the GPU's UUID
// "uuid", not "UUID" (gpu_collector.go:316-319), which a field map does
// not rename: gpulens says so rather than map them by itself.
var compat1x = map[string]string{
	"dcgm_sm_clock": SMClock, "dcgm_memory_clock": MemClock, "dcgm_memory_temp": MemoryTemp,
	"dcgm_gpu_temp": GPUTemp, "dcgm_power_usage": PowerUsage, "dcgm_total_energy_consumption": TotalEnergy,
	"dcgm_pcie_replay_counter": PCIeReplay, "dcgm_gpu_utilization": GPUUtil, "dcgm_xid_errors": XIDErrors,
	"dcgm_fb_free": FBFree, "dcgm_fb_used": FBUsed, "dcgm_fi_prof_gr_engine_active": GREngineActive,
	"dcgm_fi_prof_pipe_tensor_active": TensorActive, "dcgm_fi_prof_dram_active": DRAMActive,
	"dcgm_fi_prof_pcie_tx_bytes": PCIeTXBytes, "dcgm_fi_prof_pcie_rx_bytes": PCIeRXBytes,
	"dcgm_ecc_dbe_volatile_total": ECCDBEVolTotal, "dcgm_ecc_sbe_volatile_total": ECCSBEVolTotal,
}

// Lookalike says whether a metric name looks like a dcgm-exporter field
// gpulens could read under another name, and if so the field map line
// that would read it ("DCGM_FI_DEV_FB_USED: dcgm_fb_used"), or "" where
// the field is not known: a 1.x-compatible name, a field's name in
// another case, or one with a prefix or suffix a pipeline added.
func Lookalike(name string) (looks bool, mapLine string) {
	lower := strings.ToLower(name)
	if !strings.Contains(lower, "dcgm") {
		return false, ""
	}
	if f, ok := compat1x[lower]; ok {
		return true, f + ": " + name
	}
	for _, f := range fields {
		for _, sp := range f.Spellings {
			if sp.Name != name && strings.Contains(lower, strings.ToLower(sp.Name)) {
				// The longest spelling contained wins: FB_USED_BYTES
				// over FB_USED.
				best := sp.Name
				for _, other := range f.Spellings {
					if len(other.Name) > len(best) && strings.Contains(lower, strings.ToLower(other.Name)) {
						best = other.Name
					}
				}
				return true, best + ": " + name
			}
		}
	}
	return true, ""
}
