package dashboards

import (
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

func nodeDetail(s chart) spec {
	return spec{
		uid: "gpulens-node-" + s.schema(), title: "gpulens / Node and GPU detail", timeFrom: "now-6h",
		desc: "Every GPU and MIG instance of the selected nodes: load, profiling, memory, power, thermals and health.",
		vars: []cog.Builder[dashboard.VariableModel]{clusterVar(s), nodeVar(s)},
		rows: []row{
			{"Load", []panel{
				ratio("GPU utilization", "Load of each physical GPU: NVML utilization, or on MIG the slices' SM activity weighted by their compute share.", 8,
					target{expr: s.gpuUtil(), legend: gpuLegend}),
				ratio("MIG instance activity", "SM (graphics engine) activity of each MIG instance, of the instance itself. Never added to its parent GPU.", 8,
					target{expr: s.migUtil(), legend: migLegend}),
				ratio("SM active", "Fraction of time at least one warp was resident on an SM, per GPU and per MIG instance (GPM on Hopper and newer; DCGM profiling)."+s.note("sm_active"), 8,
					target{expr: s.prof("sm_active"), legend: gpuLegend}, target{expr: s.migProf("sm_active"), legend: migLegend}),
			}},
			{"Profiling", []panel{
				ratio("SM occupancy", "Warps resident relative to the maximum the SMs can hold, per GPU and per MIG instance."+s.note("sm_occupancy"), 8,
					target{expr: s.prof("sm_occupancy"), legend: gpuLegend}, target{expr: s.migProf("sm_occupancy"), legend: migLegend}),
				ratio("Tensor pipe active", "Fraction of cycles the tensor cores were busy, per GPU and per MIG instance.", 8,
					target{expr: s.prof("tensor_active"), legend: gpuLegend}, target{expr: s.migProf("tensor_active"), legend: migLegend}),
				ratio("DRAM active", "Device memory bandwidth used relative to peak, per GPU and per MIG instance.", 8,
					target{expr: s.prof("dram_active"), legend: gpuLegend}, target{expr: s.migProf("dram_active"), legend: migLegend}),
			}},
			{"Memory", []panel{
				ts("GPU memory", "bytes", "Device memory allocated, against the memory installed (dashed).", 12,
					target{expr: s.memUsed(), legend: gpuLegend + " used"},
					target{expr: s.memTotal(), legend: gpuLegend + " total"}),
				ts("MIG instance memory", "bytes", "Memory used in each MIG instance, against the instance's size.", 12,
					target{expr: s.migMemUsed(), legend: migLegend + " used"},
					target{expr: s.migMemTotal(), legend: migLegend + " total"}),
			}},
			{"Power and thermals", []panel{
				ts("Power", "watt", "Board power draw.", 8, target{expr: s.power(), legend: gpuLegend}),
				ts("Temperature", "celsius", "GPU core temperature.", 8, target{expr: s.temperature(), legend: gpuLegend}),
				ts("Clocks", "hertz", "Current SM and memory clocks.", 8, target{expr: s.clock(), legend: gpuLegend + " {{clock}}"}),
			}},
			{"Health", []panel{
				ts("Throttle reasons", "short", "Clocks-event reasons that cost performance while active (power cap, thermal and hardware slowdowns); 1 while active."+s.note("throttle"), 6,
					target{expr: s.throttle(), legend: gpuLegend + " {{reason}}"}),
				ts("XID errors", "short", "New XID critical-error events (79: fallen off the bus; 48: double-bit ECC; 13, 43: application faults).", 6,
					target{expr: s.xidEvents(), legend: gpuLegend + " XID {{xid}}"}),
				ts("Uncorrectable ECC errors", "short", "New uncorrectable ECC errors: the GPU needs a reset, and a replacement if they recur."+s.note("ecc"), 6,
					target{expr: s.eccUncorrected(), legend: gpuLegend}),
				ts("Remapped rows", "short", "Memory rows remapped over the GPU's life, by type; a failed remap (dashed) means the GPU should be replaced.", 6,
					target{expr: s.remappedRows(), legend: gpuLegend + " {{type}}"},
					target{expr: s.remapFailed(), legend: gpuLegend + " remap failed"}),
			}},
		},
	}
}
