package dcgm

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gpulens/gpulens/signals"
	"github.com/gpulens/gpulens/vocab"
)

// SchemaName is the schema of NVIDIA's dcgm-exporter.
const SchemaName = vocab.SchemaDCGM

// Schema reads dcgm-exporter's series, as deployed by the GPU Operator with
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
//   - Every field is read under each era's name and in its base unit
//     (eras.go: memory in bytes, utilisation 0..1); total is FB_USED + FB_FREE +
//     FB_RESERVED (FB_RESERVED only exists from DCGM 3.1 on, and counts as 0
//     when absent). On MIG the GPU total is the sum of its instances, so
//     memory not partitioned into any instance is not counted.
//
// Scope narrows every selection (see signals.Scope); the zero Schema
// reads every series.
type Schema struct {
	Scope signals.Scope
	// Fields maps fields onto a store's own names (--dcgm-fields); nil
	// reads dcgm-exporter's names of every era.
	Fields *FieldMap
	// TenantField is the field whose series name a whole GPU's tenants:
	// FB_USED when empty (see Fit).
	TenantField string
	// MixedNames, where some GPUs report only another of the tenant
	// fields than TenantField (counters files that differ between nodes:
	// MixedProbe), are the store's names of FB_USED, GPU_UTIL and
	// GR_ENGINE_ACTIVE (MixedNamesOf), from any of which a whole GPU and
	// its tenants are then read; empty where the counters files agree.
	// The store's names only, not every era's: the allocation repeats
	// the selection some thirty times, and every name of the three fields
	// takes it past VictoriaMetrics' query length. Joined by "|", which
	// keeps a Schema comparable.
	MixedNames string
}

var _ signals.Schema = Schema{}

// Name implements signals.Schema.
func (s Schema) Name() string { return SchemaName }

// norm, union and setLabel are signals', named short: the expressions
// below are dense.
var (
	norm     = Norm
	setLabel = signals.SetLabel
)

func union(exprs []string) string { return signals.Union(exprs...) }

// on is field's selection in the scope, with raw matchers.
func (s Schema) on(field string, matchers ...string) Sel {
	sel := On(field, append([]string{s.Scope.Matchers}, matchers...)...)
	sel.Node, sel.Namespace, sel.Pod = s.Scope.Node, s.Scope.Namespace, s.Scope.Pod
	sel.Fields = s.Fields
	return sel
}

// by groups by labels and the scope's Keep.
func (s Schema) by(labels []string) string { return s.Scope.By(labels...) }

func (s Schema) tenants(field, matchers string) string { return Tenants(s.on(field, matchers)) }

// present is tenants for a reader of which tenants there are, not of
// their values (Sel.Presence).
func (s Schema) present(field, matchers string) string {
	sel := s.on(field, matchers)
	sel.Presence = true
	return Tenants(sel)
}

// held is tenants with the co-tenants a flapping pod label names in turn
// (Held), for presence only.
func (s Schema) held(field, matchers string) string {
	sel := s.on(field, matchers)
	sel.Presence = true
	return Held(sel, FlapWindow)
}

// wholeTenants are a whole GPU's tenants (held), from TenantField.
func (s Schema) wholeTenants() string { return Held(s.tenantSel(wholeGPU), FlapWindow) }

func (s Schema) tenantField() string { return cmp.Or(s.TenantField, FBUsed) }

// tenantFields are the fields Fit chooses the tenant field among, in its
// order.
var tenantFields = []string{FBUsed, GPUUtil, GREngineActive}

// tenantSel is the presence selection of the series that say a whole GPU
// is there and who holds it: TenantField's, or where the counters files
// differ (MixedNames) any tenant field's, by one regex over the names.
// A GPU with several of them has a series of each per label set: readers
// aggregate before any arithmetic.
func (s Schema) tenantSel(matchers string) Sel {
	if s.MixedNames != "" {
		return s.on("", `__name__=~"`+regexOf(strings.Split(s.MixedNames, "|"))+`"`, matchers)
	}
	sel := s.on(s.tenantField(), matchers)
	sel.Presence = true
	return sel
}

// Fit is the schema for a store holding the metric names names: the
// tenants, and with them which GPUs report (GPU), are read from the first
// of FB_USED, GPU_UTIL and GR_ENGINE_ACTIVE whose names the store holds.
// dcgm-exporter's pod mapping labels every field of a held device alike
// (transformation/kubernetes.go, PodMapper.Process), so any of them names
// the same tenants; a counters file trimmed to cut cardinality may keep
// only one, and a GPU must not vanish because its exporter kept
// GR_ENGINE_ACTIVE (the DCP profile field users keep for activity) and
// dropped the DEV_* fields. A union of the fields per GPU would say the
// same but makes the allocation's expression longer than VictoriaMetrics
// accepts (-search.maxQueryLen, 16 KiB), and a counters file is the same
// on every node of a GPU Operator install.
func (s Schema) Fit(names []string) Schema {
	for _, f := range tenantFields {
		for _, n := range s.Fields.namesOf(f) {
			if slices.Contains(names, n) {
				if f != FBUsed {
					s.TenantField = f
				}
				return s
			}
		}
	}
	return s
}

// MixedNamesOf are the names among names of the tenant fields, in Fit's
// order of the fields, as MixedNames holds them.
func (s Schema) MixedNamesOf(names []string) string {
	var out []string
	for _, f := range tenantFields {
		for _, n := range s.Fields.namesOf(f) {
			if slices.Contains(names, n) {
				out = append(out, n)
			}
		}
	}
	return strings.Join(out, "|")
}

// MixedProbe is, for a store holding names, an instant query whose
// answer over the trailing range rng is the number of whole GPUs that
// report another tenant field and not TenantField: nodes whose counters
// files differ (one trimmed to GR_ENGINE_ACTIVE beside the default's
// FB_USED), which Fit cannot see in the names of the store. Where the
// answer is above 0 the schema must read MixedNames. ok is false
// where the store holds no other tenant field's name: nothing to ask.
// Each name is read apart (last_over_time keeps the name; a regex over
// the names would give one label set twice).
func (s Schema) MixedProbe(names []string, rng string) (expr string, ok bool) {
	seen := func(fields ...string) string {
		var alts []string
		for _, f := range fields {
			for _, n := range s.Fields.namesOf(f) {
				if slices.Contains(names, n) {
					alts = append(alts, "last_over_time("+n+"{"+WholeGPU+"}["+rng+"])")
				}
			}
		}
		if len(alts) == 0 {
			return ""
		}
		return "group by (" + signals.LabelUUID + ") (" + norm("("+strings.Join(alts, " or ")+")") + ")"
	}
	var others []string
	for _, f := range tenantFields {
		if f != s.tenantField() {
			others = append(others, f)
		}
	}
	other, primary := seen(others...), seen(s.tenantField())
	if other == "" || primary == "" {
		return "", false
	}
	return "count(" + other + " unless on (" + signals.LabelUUID + ") " + primary + ")", true
}

// devicePresent is device for a reader of which series exist.
func (s Schema) devicePresent(field, matchers string) string {
	sel := s.on(field, matchers)
	sel.Presence = true
	return Device(sel)
}

func (s Schema) device(field, matchers string) string { return Device(s.on(field, matchers)) }

// migPresence selects, by metric name, the fields that say a MIG GPU
// instance is there: FB_USED, or where DCGM reports no memory per instance
// (H100 in MIG mode: dcgm-exporter #380, #434, #512) the instance's
// graphics-engine activity, which DCGM's profiling module reports; either
// alone where the other is missing (no profiling module: #310). An
// instance with both has two series: callers take a max before any
// arithmetic, which would otherwise leave two series of one label set.
func (s Schema) migPresence() string {
	return `__name__=~"` + namesRegex(s.Fields, FBUsed, GREngineActive) + `"`
}

// migTenants are the MIG instances' series that a pod holds (migPresence).
func (s Schema) migTenants(matchers string) string {
	return s.tenants("", s.migPresence()+", "+matchers)
}

// migInstances are every series of the MIG instances (migPresence).
func (s Schema) migInstances(matchers string) string {
	return s.on("", s.migPresence(), matchers).selector()
}

// migSlices is, per GPU in MIG mode, its model's compute slices
// (internal/mig), from migPresence; none for a model the catalog lacks.
func (s Schema) migSlices() string {
	var parts []string
	for _, g := range signals.SliceGroups {
		parts = append(parts, fmt.Sprintf("0 * max by %s (%s) + %d", s.by(signals.GPULabels), Any(s.on("", s.migPresence(), anyMIG, signals.ModelIn(LabelModel, g))), g.Total))
	}
	return union(parts)
}

const (
	wholeGPU = WholeGPU
	anyMIG   = AnyMIG
)

// Allocation implements signals.Schema.
func (s Schema) Allocation() string {
	// A GPU instance's share is its profile's compute slices over its
	// model's: one selection per slice count, all divided by the model's
	// total, which keeps the expression within VictoriaMetrics' default
	// query length (-search.maxQueryLen, 16 KiB) where one selection per
	// model group and slice count did not.
	var slices []string
	for _, n := range signals.AllSlices() {
		slices = append(slices, fmt.Sprintf("0 * max by %s (%s) + %d", s.by(signals.AllocationLabels), norm(s.migTenants(Profile(n))), n))
	}
	parts := []string{setLabel("("+union(slices)+") / on (node, uuid) group_left () ("+s.migSlices()+")", signals.LabelSharing, string(vocab.SharingMIG))}
	// A model whose geometry the catalog lacks: an even split of the GPU's
	// instances, as the native exporter estimates it, which still sums to
	// at most 1.
	unknown := anyMIG + ", " + signals.UnknownModel(LabelModel)
	instances := "count by (node, uuid) (count by (node, uuid, gpu_instance) (" + norm(s.migInstances(unknown)) + "))"
	parts = append(parts, setLabel("(0 * max by "+s.by(signals.AllocationLabels)+" ("+norm(s.migTenants(unknown))+") + 1)"+
		" / on (node, uuid) group_left () "+instances, signals.LabelSharing, string(vocab.SharingMIG)))
	pods := norm(s.wholeTenants())
	// The max before the arithmetic: a GPU of mixed counters files has a
	// tenant series per field (tenantSel).
	share := "(0 * max by " + s.by(signals.AllocationLabels) + " (" + pods + ") + 1)" +
		" / on (node, uuid) group_left () count by (node, uuid) (count by (node, uuid, namespace, pod) (" + pods + "))"
	parts = append(parts,
		setLabel("("+share+") == 1", signals.LabelSharing, string(vocab.SharingNone)),
		setLabel("("+share+") < 1", signals.LabelSharing, string(vocab.SharingTimeSlicing)))
	return union(parts)
}

// AllocationPresence is Allocation's series, with its labels but the
// sharing mode and no meaning in their values, for what reads only which
// pods held a GPU when (a workload's steps, its pods' owners). It reads a
// flapping pod label's co-tenants (Held) once where the shares read
// them four times: on the demo fleet's one-pod layout "workload steps"
// peaks at 28,858 samples where it took 38,894 (BENCHMARKS.md), and those
// queries run unsharded.
func (s Schema) AllocationPresence() string {
	// A group per side: an instance with both presence fields, or a pod
	// both labelled and seen around a step, is one series.
	return "group by " + s.by(signals.UsageLabels) + " (" + norm(s.migTenants(anyMIG)) + ") or group by " + s.by(signals.UsageLabels) + " (" + norm(s.wholeTenants()) + ")"
}

// unmappedBytes is how much device memory must be in use, with every
// per-process pod row at 0, for the rows to read as unmapped rather than
// as idle tenants: more than a driver's and an idle context's own (1 GiB).
const unmappedBytes = 1 << 30

// unmapped is 1 per whole GPU and step where the 2025 per-process layout's
// pod rows are all 0 while the device's own row holds memory: dcgm-exporter
// maps processes to pods through the host's /proc
// (transformation/pidmapper.go), which it cannot read without hostPID (the
// GPU Operator's default), so every tenant would read as idle. Such a GPU
// is read as copies: the device's figures, the tenant unknown.
func (s Schema) unmapped() string {
	key := s.by(signals.GPUKey)
	// A sum of 0 is 0 in any unit: the rows are read by presence, one
	// regex instead of a union of scaled names (the query's length).
	return "((sum by " + key + " (" + norm(s.present(FBUsed, wholeGPU)) + ") == 0) and on " + key +
		" (max by " + key + " (" + norm(s.device(FBUsed, wholeGPU)) + ") > " + itoa(unmappedBytes) + "))"
}

// Utilization implements signals.Schema. Where the device's GPU_UTIL series sits
// beside per-pod ones (the 2025 per-process layout), a pod's value is its
// own processes' percent of the GPU, made a fraction of its allocation as
// gpulens's is (times the pods sharing it), unless the pod rows are
// unmapped (all 0 beside a busy device: no hostPID), where every pod's
// value is the device's; elsewhere every pod's value is the device's.
func (s Schema) Utilization() string {
	key := s.by(signals.GPUKey)
	util := "max by " + s.by(signals.UsageLabels) + " (" + norm(s.tenants(GPUUtil, wholeGPU)) + ")"
	// Where only which series exist counts, they are read by presence:
	// one regex over the names, not a union of scaled selectors, which
	// keeps the expression, restricted to a shard, within
	// VictoriaMetrics' -search.maxQueryLen.
	tenantsThere := "max by " + s.by(signals.UsageLabels) + " (" + norm(s.present(GPUUtil, wholeGPU)) + ")"
	device := "count by " + key + " (" + norm(s.devicePresent(GPUUtil, wholeGPU)) + ")"
	deviceUtil := "max by " + key + " (" + norm(s.device(GPUUtil, wholeGPU)) + ")"
	pods := "count by " + key + " (count by " + s.by(tenantKey) + " (" + norm(Tenants(s.tenantSel(wholeGPU))) + "))"
	return union([]string{
		"((" + util + " and on " + key + " " + device + ") unless on " + key + " " + s.unmapped() + ") * on " + key + " group_left () " + pods,
		"(0 * " + tenantsThere + " + on " + key + " group_left () " + deviceUtil + ") and on " + key + " " + s.unmapped(),
		// Without a device row every tenant's row is the device's, and
		// the co-tenants a flapping pod label names in turn get the
		// device's figure at every step.
		"(" + s.deviceFigure(GPUUtil) + ") unless on " + key + " " + device,
		// Every name of GR_ENGINE_ACTIVE is a 0..1 ratio: read by
		// presence, its values need no scaling, and the max takes one
		// where an upgrade shows two.
		"max by " + s.by(signals.UsageLabels) + " (" + norm(s.present(GREngineActive, "")) + ")",
	})
}

// MemoryUsed implements signals.Schema.
func (s Schema) MemoryUsed() string {
	return fmt.Sprintf("max by %s (%s) or %s", s.by(signals.UsageLabels), norm(s.tenants(FBUsed, "")), s.deviceFigure(FBUsed))
}

// deviceFigure is, per whole GPU's tenant (dcgmHeld), the highest value of
// field among the GPU's tenant rows at that step: the device's own figure
// where every row repeats it (the one-pod and copies layouts).
func (s Schema) deviceFigure(field string) string {
	return "0 * max by " + s.by(signals.UsageLabels) + " (" + norm(s.held(field, wholeGPU)) + ") + on " + s.by(signals.GPUKey) +
		" group_left () max by " + s.by(signals.GPUKey) + " (" + norm(s.tenants(field, wholeGPU)) + ")"
}

// GPU implements signals.Schema. MIG instances and co-tenants' duplicates of the
// same device collapse onto the physical GPU.
func (s Schema) GPU() string {
	// From the tenants' field (Fit: GPU_UTIL where a counters file has no
	// FB_USED), which every layout writes for a GPU no pod holds too; more
	// fields would only add series for the engine to hold.
	sel := s.tenantSel(wholeGPU)
	return "0 * max by " + s.by(signals.GPULabels) + " (" + norm("("+sel.selector()+" or "+s.migInstances(anyMIG)+")") + ") + 1"
}

var gpuInstanceLabels = []string{signals.LabelNode, signals.LabelUUID, signals.LabelModel, signals.LabelGPUInstance}

// GPUUtilization implements signals.Schema.
func (s Schema) GPUUtilization() string {
	var slices []string
	for _, n := range signals.AllSlices() {
		slices = append(slices, fmt.Sprintf("max by %s (%s) * %d",
			s.by(gpuInstanceLabels), Any(s.on(GREngineActive, Profile(n))), n))
	}
	return union([]string{
		"max by " + s.by(signals.GPULabels) + " (" + Any(s.on(GPUUtil, wholeGPU)) + ")",
		"max by " + s.by(signals.GPULabels) + " (" + Any(s.on(GREngineActive, wholeGPU)) + ")",
		"sum by " + s.by(signals.GPULabels) + " (" + union(slices) + ") / on (node, uuid, model) group_left () " +
			signals.MIGTotal(func(m string) string { return Any(s.on(GREngineActive, anyMIG, m)) }, LabelModel, s.Scope.Labels(signals.GPULabels...)...),
	})
}

// GPUMemoryTotal implements signals.Schema: FB_USED + FB_FREE + FB_RESERVED,
// each field taken across the GPU's (or instance's) series apart: the
// highest used, the lowest free. Under the 2025 per-process layout no two
// fields of a held GPU share a label set (FB_USED is the device's row and
// per pod, FB_FREE copied per pod), and in every layout a series replaced
// by one with other labels (a pod arrives or leaves) lingers for the
// lookback where no staleness marker ends it, as in a backfill: the old
// free memory then sits beside the new used memory, even within one label
// set whose FB_FREE stopped. The lowest free belongs to the same moment as
// the highest used, so the sum stays the device's.
func (s Schema) GPUMemoryTotal() string {
	total := func(labels []string, m string) string {
		field := func(agg, name string) string { return agg + " by " + s.by(labels) + " (" + Any(s.on(name, m)) + ")" }
		return field("max", FBUsed) + " + " + field("min", FBFree) +
			" + (" + field("max", FBReserved) + " or 0 * " + field("max", FBUsed) + ")"
	}
	return union([]string{
		total(signals.GPULabels, wholeGPU),
		"sum by " + s.by(signals.GPULabels) + " (" + total(gpuInstanceLabels, anyMIG) + ")",
	})
}

// GPUMemoryUsed implements signals.Schema. Per-pod copies of a device series
// carry the device's value, so their maximum is the device's; MIG GPUs
// sum their instances, which do not overlap.
func (s Schema) GPUMemoryUsed() string {
	return union([]string{
		"max by " + s.by(signals.GPULabels) + " (" + Any(s.on(FBUsed, wholeGPU)) + ")",
		"sum by " + s.by(signals.GPULabels) + " (max by " + s.by(gpuInstanceLabels) + " (" + Any(s.on(FBUsed, anyMIG)) + "))",
	})
}

// GPUEnergy implements signals.Schema. The energy counter is read in
// joules in every era (millijoules before 4.9). With the pod mapping on, the device counter is split across
// series as pods come and go; taking increase() of the per-GPU maximum
// (a subquery) keeps it one continuous counter.
func (s Schema) GPUEnergy(rng, step string) string {
	return fmt.Sprintf("increase((max by %s (%s))[%s:%s])",
		s.by(signals.GPULabels), Any(s.on(TotalEnergy)), rng, step)
}

// Identifying implements signals.Schema: FB_USED, or on a fleet of H100 GPUs in
// MIG mode, which has none, the profiling field, or for a counters file
// without either GPU_UTIL, in every era's name.
func (s Schema) Identifying() []string {
	return slices.Concat(s.Fields.namesOf(FBUsed), s.Fields.namesOf(GREngineActive), s.Fields.namesOf(GPUUtil))
}

var itoa = signals.Itoa

// SliceActivity is the graphics-engine activity per MIG GPU instance,
// 0..1, by node, uuid and gpu_instance: the slice's own busy fraction,
// which the native schema borrows for a slice gpulens cannot measure.
func (s Schema) SliceActivity() string {
	return "max by " + s.by([]string{signals.LabelNode, signals.LabelUUID, signals.LabelGPUInstance}) + " (" + Any(s.on(GREngineActive, LabelGPUInstance+`!=""`)) + ")"
}

// throttleReasons is the clocks-event bitmask under either field name in
// the scope, not normalised; a node filter reads either host spelling.
func (s Schema) throttleReasons() string {
	if s.Scope.Node == "" {
		return ThrottleReasons(s.Fields, s.Scope.Matchers)
	}
	var hosts []string
	for _, h := range HostLabels {
		hosts = append(hosts, ThrottleReasons(s.Fields, s.Scope.Matchers, fmt.Sprintf("%s=~%q", h, s.Scope.Node)))
	}
	return "(" + strings.Join(hosts, " or ") + ")"
}

// tenantKey tells a whole GPU's tenants apart, to count them.
var tenantKey = []string{signals.LabelNode, signals.LabelUUID, signals.LabelNamespace, signals.LabelPod}

// Traits implements signals.Schema. A tenant's utilization reads the
// device's series and counts its co-tenants across namespaces
// (Utilization), so namespace shards are not exact. The planner's cost is
// 3.1 points per probed series and step measured on the demo fleet in the
// per-process layout ("gpu attribution"; "allocations" 3.0, "gpus" 2.9;
// 2.5 in the one-pod layout), since a flapping pod label's co-tenants
// are read from range selectors on either side of each step (Held).
func (Schema) Traits() signals.Traits {
	return signals.Traits{HostLabels: HostLabels, TenantExact: false, PointsPerSeriesStep: 4, HostPods: ExporterPods}
}
