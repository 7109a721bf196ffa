package dcgm

import (
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
)

// TestEmitted: what an exporter of each era writes for a legacy value,
// expected values from the 4.9.0 release notes' unit changes ("clocks from
// MHz to hertz, energy from millijoules to joules, utilization from a
// percentage to a 0 to 1 ratio, GPU memory from MiB to bytes") and the
// names from DCGM's headers (eras.go).
func TestEmitted(t *testing.T) {
	tests := []struct {
		field string
		v     float64
		era   Era
		name  string
		want  float64
	}{
		{GPUUtil, 93, EraLegacy, GPUUtil, 93},
		{GPUUtil, 93, Era49, "DCGM_FI_DEV_GPU_UTIL_RATIO", 0.93},
		{FBUsed, 512, Era49, "DCGM_FI_DEV_FB_USED_BYTES", 512 << 20},
		{FBFree, 78888, Era410, "DCGM_FI_DEV_FB_FREE_BYTES", 78888 << 20},
		{SMClock, 1410, Era49, "DCGM_FI_DEV_SM_CLOCK_HERTZ", 1410e6},
		{MemClock, 1593, Era49, "DCGM_FI_DEV_MEMORY_CLOCK_HERTZ", 1593e6},
		{TotalEnergy, 123456789, Era49, "DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL", 123456.789},
		{PowerUsage, 312.5, Era49, "DCGM_FI_DEV_BOARD_POWER_WATTS", 312.5},
		{GREngineActive, 0.5, Era49, "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", 0.5},
		{XIDErrors, 31, Era49, "DCGM_FI_DEV_XID_ERROR", 31},
		{ClockThrottleReasons, 8, EraDCGM3, ClockThrottleReasons, 8},
		{ClockThrottleReasons, 8, EraLegacy, ClocksEventReasons, 8},
		{PCIeTXBytes, 1e9, Era49, PCIeTXBytes, 1e9},
		{PCIeTXBytes, 1e9, Era410, "DCGM_FI_PROF_PCIE_TX_BYTES_PER_SECOND", 1e9},
		{ECCDBEVolTotal, 2, Era410, ECCDBEVolTotal, 2},
	}
	for _, tt := range tests {
		name, v := Emitted(tt.field, tt.v, tt.era)
		if name != tt.name || v != tt.want {
			t.Errorf("Emitted(%s, %v, %s) = %s %v, want %s %v", tt.field, tt.v, tt.era, name, v, tt.name, tt.want)
		}
	}
}

// TestSelectorReadsEveryEra: a value selection is the union of every
// name, newest first, each scaled to the base unit; a presence selection
// one regex that matches every name and nothing else.
func TestSelectorReadsEveryEra(t *testing.T) {
	tests := []struct {
		sel  Sel
		want string
	}{
		{On(FBUsed, WholeGPU), `(DCGM_FI_DEV_FB_USED_BYTES{GPU_I_PROFILE=""} or DCGM_FI_DEV_FB_USED{GPU_I_PROFILE=""} * 1048576)`},
		{On(GPUUtil), `(DCGM_FI_DEV_GPU_UTIL_RATIO or DCGM_FI_DEV_GPU_UTIL / 100)`},
		{On(TotalEnergy), `(DCGM_FI_DEV_GPU_ENERGY_JOULES_TOTAL or DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION / 1000)`},
		{On(SMClock), `(DCGM_FI_DEV_SM_CLOCK_HERTZ or DCGM_FI_DEV_SM_CLOCK * 1000000)`},
		{On(ECCDBEVolTotal), `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`},
		// Every name of the XID gauge holds the code: one regex.
		{Sel{Field: XIDErrors, Offset: "1m"}, `{__name__=~"DCGM_FI_DEV_XID_ERROR(|S)"} offset 1m`},
		{Presence(FBUsed, WholeGPU), `{__name__=~"DCGM_FI_DEV_FB_USED(_BYTES|)", GPU_I_PROFILE=""}`},
	}
	p := parser.NewParser(parser.Options{})
	for _, tt := range tests {
		got := tt.sel.selector()
		if got != tt.want {
			t.Errorf("%+v:\n got %s\nwant %s", tt.sel, got, tt.want)
		}
		if _, err := p.ParseExpr(got); err != nil {
			t.Errorf("%s does not parse: %v", got, err)
		}
	}
	re := regexp.MustCompile("^(?:" + namesRegex(nil, FBUsed, GREngineActive) + ")$")
	for _, n := range []string{FBUsed, "DCGM_FI_DEV_FB_USED_BYTES", GREngineActive, "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO"} {
		if !re.MatchString(n) {
			t.Errorf("the presence regex %s misses %s", re, n)
		}
	}
	for _, n := range []string{FBFree, "DCGM_FI_DEV_FB_USED_RATIO", SMActive} {
		if re.MatchString(n) {
			t.Errorf("the presence regex %s matches %s", re, n)
		}
	}
}

// TestFieldsTable: every field has one name per era at most, no name is
// two fields', and a name that changed unit says so in its name (the
// naming standard: dcgmlib/dcgm_field_naming.py, units BYTES, CELSIUS,
// HERTZ, JOULES, SECONDS, WATTS and the suffix RATIO).
func TestFieldsTable(t *testing.T) {
	owner := map[string]string{}
	for _, f := range Fields() {
		for _, sp := range f.Spellings {
			if o, dup := owner[sp.Name]; dup {
				t.Errorf("%s is a name of both %s and %s", sp.Name, o, f.Key)
			}
			owner[sp.Name] = f.Key
			if sp.Since >= Era49 && sp.Scale == 1 && sp.Name != f.Key {
				unit := map[string]string{UnitBytes: "_BYTES", UnitRatio: "_RATIO", UnitHertz: "_HERTZ", UnitJoules: "_JOULES", UnitWatts: "_WATTS", UnitCelsius: "_CELSIUS"}[f.Unit]
				if unit != "" && !strings.Contains(sp.Name, unit) {
					t.Errorf("%s (%s) does not name its unit %s", sp.Name, f.Unit, unit)
				}
			}
		}
		if NameIn(f.Key, EraLegacy) != f.Key && f.Key != ClockThrottleReasons {
			t.Errorf("%s is not its own name before 4.9: %s", f.Key, NameIn(f.Key, EraLegacy))
		}
	}
}

func TestLookalike(t *testing.T) {
	tests := []struct {
		name  string
		looks bool
		line  string
	}{
		{"dcgm_gpu_utilization", true, "DCGM_FI_DEV_GPU_UTIL: dcgm_gpu_utilization"},
		{"dcgm_fb_used", true, "DCGM_FI_DEV_FB_USED: dcgm_fb_used"},
		{"dcgm_fi_dev_fb_used", true, "DCGM_FI_DEV_FB_USED: dcgm_fi_dev_fb_used"},
		{"dcgm_fi_dev_fb_used_bytes", true, "DCGM_FI_DEV_FB_USED_BYTES: dcgm_fi_dev_fb_used_bytes"},
		{"gpu_DCGM_FI_DEV_GPU_UTIL", true, "DCGM_FI_DEV_GPU_UTIL: gpu_DCGM_FI_DEV_GPU_UTIL"},
		{"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", true, ""},
		{"dcgm_exporter_build_info", true, ""},
		{"node_cpu_seconds_total", false, ""},
		{"gpulens_gpu_info", false, ""},
	}
	for _, tt := range tests {
		looks, line := Lookalike(tt.name)
		if looks != tt.looks || line != tt.line {
			t.Errorf("Lookalike(%s) = %v %q, want %v %q", tt.name, looks, line, tt.looks, tt.line)
		}
	}
}
