package schema

import (
	"fmt"
	"slices"
	"strings"
)

// NameDCGM is the schema of NVIDIA's dcgm-exporter.
const NameDCGM = "dcgm-exporter"

// allSlices are the compute slice counts GPU instance profile names start
// with ("3g.40gb" holds 3), over every model of the catalog.
func allSlices() []int {
	var out []int
	for _, g := range sliceGroups {
		for _, n := range g.slices {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

const mib = 1 << 20

// DCGM reads dcgm-exporter's series, as deployed by the GPU Operator with
// its Kubernetes pod mapping on (the pod, namespace and container labels).
//
// What dcgm-exporter cannot tell, and how this schema answers:
//   - Allocation: a series with a non-empty pod label is an allocation. Its
//     share on MIG is the compute slices of GPU_I_PROFILE over the model's
//     total from internal/mig (an even split of the GPU's instances for a
//     model it lacks), and otherwise 1 over the
//     number of distinct pods on the GPU at that moment. dcgm-exporter does
//     not know the device plugin's replica count, so a time-sliced GPU with
//     one running pod reads as a whole GPU (sharing "none"), and MPS reads
//     as time-slicing.
//   - Utilization and memory of a time-sliced GPU are the whole device's:
//     DCGM has no per-process figures, so every co-tenant sees the same
//     values. On MIG, DCGM_FI_PROF_GR_ENGINE_ACTIVE of the GPU instance is
//     the per-slice signal (DCGM_FI_DEV_GPU_UTIL is absent there).
//   - Memory is in MiB and converted to bytes; total is FB_USED + FB_FREE +
//     FB_RESERVED (FB_RESERVED only exists from DCGM 3.1 on, and counts as 0
//     when absent). On MIG the GPU total is the sum of its instances, so
//     memory not partitioned into any instance is not counted.
type DCGM struct{}

var _ Schema = DCGM{}

// Name implements Schema.
func (DCGM) Name() string { return NameDCGM }

// norm renames dcgm-exporter's labels to the normalised ones. dcgm-exporter
// has spelled the host label both Hostname and hostname across versions and
// deployments; whichever is set wins. Renaming from a label that is absent
// yields an empty, that is no, label.
func norm(expr string) string {
	for _, r := range [][2]string{
		{LabelNode, "Hostname"}, {LabelNode, "hostname"}, {LabelUUID, "UUID"}, {LabelModel, "modelName"},
		{LabelGPUInstance, "GPU_I_ID"}, {LabelMIGProfile, "GPU_I_PROFILE"},
	} {
		regex := "(.*)"
		if r[0] == LabelNode {
			// Never blank a node set by the other spelling.
			regex = "(.+)"
		}
		expr = fmt.Sprintf(`label_replace(%s, %q, "$1", %q, %q)`, expr, r[0], r[1], regex)
	}
	return expr
}

func setLabel(expr, name, value string) string {
	return fmt.Sprintf(`label_replace(%s, %q, %q, "", "")`, expr, name, value)
}

// union joins expressions whose label sets never overlap.
func union(exprs []string) string {
	return "(" + strings.Join(exprs, ") or (") + ")"
}

func migProfile(n int) string { return fmt.Sprintf(`GPU_I_PROFILE=~"%dg[.].*"`, n) }

const (
	wholeGPU = `GPU_I_PROFILE=""`
	anyMIG   = `GPU_I_PROFILE!=""`
)

// Allocation implements Schema.
func (DCGM) Allocation() string {
	var parts []string
	for _, g := range sliceGroups {
		for _, n := range g.slices {
			sel := migProfile(n) + ", " + modelMatchers("modelName", g)
			share := fmt.Sprintf("0 * %s + %d / %d", norm(dcgmTenants("DCGM_FI_DEV_FB_USED", sel)), n, g.total)
			parts = append(parts, setLabel("max by "+by(AllocationLabels)+" ("+share+")", LabelSharing, SharingMIG))
		}
	}
	// A model whose geometry the catalog lacks: an even split of the GPU's
	// instances, as the native exporter estimates it, which still sums to
	// at most 1.
	unknown := anyMIG + ", " + unknownModel("modelName")
	instances := "count by (node, uuid) (count by (node, uuid, gpu_instance) (" + norm("DCGM_FI_DEV_FB_USED{"+unknown+"}") + "))"
	parts = append(parts, setLabel("max by "+by(AllocationLabels)+" (0 * "+norm(dcgmTenants("DCGM_FI_DEV_FB_USED", unknown))+" + 1)"+
		" / on (node, uuid) group_left () "+instances, LabelSharing, SharingMIG))
	pods := norm(dcgmTenants("DCGM_FI_DEV_FB_USED", wholeGPU))
	share := "max by " + by(AllocationLabels) + " (0 * " + pods + " + 1)" +
		" / on (node, uuid) group_left () count by (node, uuid) (count by (node, uuid, namespace, pod) (" + pods + "))"
	parts = append(parts,
		setLabel("("+share+") == 1", LabelSharing, SharingNone),
		setLabel("("+share+") < 1", LabelSharing, SharingTimeSlicing))
	return union(parts)
}

// Utilization implements Schema. Where the device's GPU_UTIL series sits
// beside per-pod ones (the 2025 per-process layout), a pod's value is its
// own processes' percent of the GPU, made a fraction of its allocation as
// gpulens's is (times the pods sharing it); elsewhere every pod's value is
// the device's.
func (DCGM) Utilization() string {
	key := by(GPUKey)
	util := "max by " + by(UsageLabels) + " (" + norm(dcgmTenants("DCGM_FI_DEV_GPU_UTIL", wholeGPU)) + ") / 100"
	device := "count by " + key + " (" + norm(dcgmDevice("DCGM_FI_DEV_GPU_UTIL", wholeGPU)) + ")"
	pods := "count by " + key + " (count by (node, uuid, namespace, pod) (" + norm(dcgmTenants("DCGM_FI_DEV_FB_USED", wholeGPU)) + "))"
	return union([]string{
		"(" + util + " and on " + key + " " + device + ") * on " + key + " group_left () " + pods,
		util + " unless on " + key + " " + device,
		"max by " + by(UsageLabels) + " (" + norm(dcgmTenants("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "")) + ")",
	})
}

// MemoryUsed implements Schema.
func (DCGM) MemoryUsed() string {
	return fmt.Sprintf("max by %s (%s) * %d", by(UsageLabels), norm(dcgmTenants("DCGM_FI_DEV_FB_USED", "")), mib)
}

// GPU implements Schema. MIG instances and co-tenants' duplicates of the
// same device collapse onto the physical GPU.
func (DCGM) GPU() string {
	return "0 * max by " + by(GPULabels) + " (" + norm("DCGM_FI_DEV_FB_USED") + ") + 1"
}

var gpuInstanceLabels = []string{LabelNode, LabelUUID, LabelModel, LabelGPUInstance}

// GPUUtilization implements Schema.
func (DCGM) GPUUtilization() string {
	var slices []string
	for _, n := range allSlices() {
		slices = append(slices, fmt.Sprintf("max by %s (%s) * %d",
			by(gpuInstanceLabels), norm("DCGM_FI_PROF_GR_ENGINE_ACTIVE{"+migProfile(n)+"}"), n))
	}
	return union([]string{
		"max by " + by(GPULabels) + " (" + norm("DCGM_FI_DEV_GPU_UTIL{"+wholeGPU+"}") + ") / 100",
		"max by " + by(GPULabels) + " (" + norm("DCGM_FI_PROF_GR_ENGINE_ACTIVE{"+wholeGPU+"}") + ")",
		"sum by " + by(GPULabels) + " (" + union(slices) + ") / on (node, uuid, model) group_left () " +
			migTotal("DCGM_FI_DEV_FB_USED", "", "modelName", norm),
	})
}

// GPUMemoryTotal implements Schema: FB_USED + FB_FREE + FB_RESERVED,
// each field taken across the GPU's (or instance's) series apart: the
// highest used, the lowest free. Under the 2025 per-process layout no two
// fields of a held GPU share a label set (FB_USED is the device's row and
// per pod, FB_FREE copied per pod), and in every layout a series replaced
// by one with other labels (a pod arrives or leaves) lingers for the
// lookback where no staleness marker ends it, as in a backfill: the old
// free memory then sits beside the new used memory, even within one label
// set whose FB_FREE stopped. The lowest free belongs to the same moment as
// the highest used, so the sum stays the device's.
func (DCGM) GPUMemoryTotal() string {
	total := func(labels []string, m string) string {
		field := func(agg, name string) string { return agg + " by " + by(labels) + " (" + norm(name+"{"+m+"}") + ")" }
		return field("max", "DCGM_FI_DEV_FB_USED") + " + " + field("min", "DCGM_FI_DEV_FB_FREE") +
			" + (" + field("max", "DCGM_FI_DEV_FB_RESERVED") + " or 0 * " + field("max", "DCGM_FI_DEV_FB_USED") + ")"
	}
	return fmt.Sprintf("(%s) * %d", union([]string{
		total(GPULabels, wholeGPU),
		"sum by " + by(GPULabels) + " (" + total(gpuInstanceLabels, anyMIG) + ")",
	}), mib)
}

// GPUMemoryUsed implements Schema. Per-pod copies of a device series
// carry the device's value, so their maximum is the device's; MIG GPUs
// sum their instances, which do not overlap.
func (DCGM) GPUMemoryUsed() string {
	return fmt.Sprintf("(%s) * %d", union([]string{
		"max by " + by(GPULabels) + " (" + norm("DCGM_FI_DEV_FB_USED{"+wholeGPU+"}") + ")",
		"sum by " + by(GPULabels) + " (max by " + by(gpuInstanceLabels) + " (" + norm("DCGM_FI_DEV_FB_USED{"+anyMIG+"}") + "))",
	}), mib)
}

// GPUEnergy implements Schema. DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION is in
// millijoules. With the pod mapping on, the device counter is split across
// series as pods come and go; taking increase() of the per-GPU maximum
// (a subquery) keeps it one continuous counter.
func (DCGM) GPUEnergy(rng, step string) string {
	return fmt.Sprintf("increase((max by %s (%s))[%s:%s]) / 1000",
		by(GPULabels), norm("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), rng, step)
}

// Identifying implements Schema.
func (DCGM) Identifying() []string { return []string{"DCGM_FI_DEV_FB_USED"} }
